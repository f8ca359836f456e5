natsplan {
  project = "t"
}

stream "ORDERS" {
  num_replicas = 1.5 # ERROR: Incorrect attribute value type; num_replicas must be a whole number
}
