natsplan {
  project = "t"
}

stream "ORDERS" {
  max_msgs = 1.5e-999 # ERROR: max_msgs must be a whole number
}
