# NP105: eight handlers at once in a process whose handlers compute.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "thumbnails" {
  stream = "ORDERS"
  workers {
    count       = 2
    fetch_batch = 8
    handler     = "cpu"
    concurrency = 8 # WARNING: NP105
  }
}
