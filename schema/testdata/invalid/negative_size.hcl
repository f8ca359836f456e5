natsplan {
  project = "t"
}

stream "ORDERS" {
  max_bytes = -5 # ERROR: Invalid size; max_bytes must be at least 0, or -1 for unlimited
}
