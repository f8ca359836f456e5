natsplan {
  project = "t"
}

stream "ORDERS" {
  placement = { cluster = "east" }
  placement { # ERROR: Duplicate argument
    cluster = "west"
  }
}
