natsplan {
  project = "t"
}

stream "ORDERS" {
  allow_direct = "yes" # ERROR: Incorrect attribute value type; allow_direct must be true or false
}
