natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = ["orders.*"]
}

subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*"
  partitions = 100000000 # ERROR: partitions must be at most 1024
  key        = [1]
}
