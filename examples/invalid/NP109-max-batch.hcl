# NP109: every fetch asks for more than the consumer's max_batch: the server refuses it.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "email" {
  stream = "ORDERS"
  consumer {
    max_batch = 20
  }
  workers {
    count       = 2
    fetch_batch = 50 # ERROR: NP109
  }
}
