# NP101: each fetch asks for more messages than the consumer lets be in flight.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "email" {
  stream = "ORDERS"
  consumer {
    max_ack_pending = 10
  }
  workers {
    count       = 1
    fetch_batch = 50 # ERROR: NP101
  }
}
