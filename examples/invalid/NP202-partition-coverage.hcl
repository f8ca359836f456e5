# NP202: a consumer in the group's name space also reads partition 3.
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

consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "by_customer"
  ordering = "per_key"
}

consumer "ORDERS" "fulfilment-extra" {
  filter_subject = "3.orders.*.*" # ERROR: NP202
  ack_policy     = "explicit"
}
