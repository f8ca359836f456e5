natsplan {
  project = "shop"
  server_limits {
    duplicate_window = "50ms" # ERROR: duplicate_window = "50ms": the server's limit is a duration of at least 100ms
  }
}
