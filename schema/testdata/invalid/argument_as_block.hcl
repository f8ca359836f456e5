natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects { # ERROR: "subjects" is an argument, not a block
  }
}
