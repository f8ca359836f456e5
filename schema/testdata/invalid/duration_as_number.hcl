natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  ack_wait = 30 # ERROR: Invalid duration; ack_wait is a duration: write a string with a unit
}
