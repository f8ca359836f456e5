# NP104: the server redelivers after 10s while a handler may still work for 30s.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "invoices" {
  stream = "ORDERS"
  consumer {
    ack_wait = "10s" # ERROR: NP104
  }
  workers {
    count            = 2
    fetch_batch      = 10
    max_handler_time = "30s"
  }
}
