natsplan {
  project = "t"
}

stream "ORDERS" {
  placement "east" { # ERROR: Extraneous label
  }
}
