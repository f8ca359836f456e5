natsplan {
  project = "t"
}

stream "ORDERS" {
  max_bytes = "10GX" # ERROR: Invalid size; max_bytes: unknown size unit "GX"
}
