natsplan {
  project = "t"
}

stream "ORDERS" {
  max_msgs = 1e999 # ERROR: Value out of range
}
