# NP201: the key names a third wildcard; the source has two.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 8
  key        = [3] # ERROR: NP201
}
