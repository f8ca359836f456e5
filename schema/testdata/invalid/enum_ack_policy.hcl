natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  ack_policy = "explict" # ERROR: Invalid ack_policy value
}
