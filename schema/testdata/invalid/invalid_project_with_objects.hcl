natsplan {
  project = "my shop" # ERROR: Invalid project name
}

stream "ORDERS" {
}
