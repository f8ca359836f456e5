natsplan {
  project = "t"
}

stream "ORDERS" {
  max_msg_size = "5GB" # ERROR: Value out of range
}
