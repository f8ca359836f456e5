natsplan {
  project = "t"
}

stream "ORDERS" {
  first_seq = -1 # ERROR: Value out of range
}
