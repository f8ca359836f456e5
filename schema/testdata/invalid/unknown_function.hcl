natsplan {
  project = "t"
}

stream "ORDERS" {
  description = uppercase("x") # ERROR: Call to unknown function
}
