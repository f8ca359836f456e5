natsplan {
  project = "shop"
  server_limits {
    max_request_batch = 0 # ERROR: Invalid server limit; max_request_batch = 0: the server's limit is a positive count
  }
}
