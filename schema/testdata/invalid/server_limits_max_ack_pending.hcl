natsplan {
  project = "shop"
  server_limits {
    max_ack_pending = -1 # ERROR: Invalid server limit; max_ack_pending = -1: the server's limit is a positive count
  }
}
