# NP204: the server partitions ORDERS 4 ways; the files say 8 (the test supplies the live side).
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 8 # WARNING: NP204
  key        = [1]
}
