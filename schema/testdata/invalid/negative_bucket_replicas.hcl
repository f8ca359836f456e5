natsplan {
  project = "t"
}

kv "sessions" {
  num_replicas = -1 # ERROR: Invalid num_replicas
}
