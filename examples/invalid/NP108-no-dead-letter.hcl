# NP108: after five deliveries a message stops being delivered and nobody hears of it.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer "ORDERS" "audit" {
  ack_policy  = "explicit"
  max_deliver = 5 # WARNING: NP108
}
