natsplan {
  project = "t"
}

stream "ORDERS" {
  max_agee = "1h" # ERROR: Unsupported argument; An argument named "max_agee" is not expected in a stream block. Did you mean "max_age"?
}
