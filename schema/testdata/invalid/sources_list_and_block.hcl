natsplan {
  project = "t"
}

stream "ARCHIVE" {
  sources = [{ name = "ORDERS" }]
  source { # ERROR: Duplicate argument
    name = "OTHER"
  }
}
