natsplan {
  project = "t"
}

kv "sessions" {
  storage = "disk" # ERROR: Invalid storage value
}
