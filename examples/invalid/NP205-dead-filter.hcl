# NP205: the filter is written as producers publish, but the stream stores subjects
# after its partition transform, so it never matches.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 4
  key        = [1]
}

consumer_group "email" {
  stream          = "ORDERS"
  filter_subjects = ["orders.*.created"] # ERROR: NP205
}
