natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  durable_name = "other" # ERROR: Argument not allowed
}
