natsplan {
  project = "t"
}

stream "ORDERS" {
  placement {
    preferred = "n1" # ERROR: Argument not allowed
  }
}
