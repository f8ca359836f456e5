# NP103: one durable per worker process: every process gets every message.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer "ORDERS" "worker-1" {
  filter_subject = "orders.>"
  ack_policy     = "explicit"
}

consumer "ORDERS" "worker-2" { # ERROR: NP103
  filter_subject = "orders.>"
  ack_policy     = "explicit"
}
