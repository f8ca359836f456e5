natsplan {
  project = "t"
}

stream "ORDERS" {
  num_replicas = var.replicas # ERROR: Unsupported attribute
}
