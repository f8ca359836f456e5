natsplan {
  project = "t"
}

stream "ORDERS" {
  placment { # ERROR: Did you mean "placement"?
    cluster = "east"
  }
}
