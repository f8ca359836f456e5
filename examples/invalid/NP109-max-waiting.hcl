# NP109: four workers keep a pull waiting each, but the consumer queues two.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "email" {
  stream = "ORDERS"
  consumer {
    max_waiting = 2
  }
  workers {
    count       = 4 # ERROR: NP109
    fetch_batch = 10
  }
}
