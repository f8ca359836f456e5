natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = ["orders.*"]
}

subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*"
  partitions = 4
  key        = ["one"] # ERROR: Incorrect attribute value type; key must be a whole number
}
