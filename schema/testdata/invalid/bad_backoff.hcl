natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  backoff = ["1m", "soon"] # ERROR: Invalid duration
}
