natsplan {
  project = "t"
}

stream "ORDERS" {
  lifecycle {
    replace_on_change = true # ERROR: streams are never replaced
  }
}
