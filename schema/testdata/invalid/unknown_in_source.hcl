natsplan {
  project = "t"
}

stream "ARCHIVE" {
  source {
    name = "ORDERS"
  }
  source {
    nme = "OTHER" # ERROR: Did you mean "name"?
  }
}
