natsplan {
  project = "t"
}

stream "ORDERS" {
  metadata = { "natsplan.project" = "other" } # ERROR: Reserved metadata key
}
