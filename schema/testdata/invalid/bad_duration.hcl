natsplan {
  project = "t"
}

stream "ORDERS" {
  max_age = "3 days" # ERROR: Invalid duration
}
