natsplan {
  project = "t"
}

stream "ORDERS" {
  description = "${1e99999999}" # ERROR: Number out of range
}
