natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  opt_start_time = "yesterday" # ERROR: Invalid time
}
