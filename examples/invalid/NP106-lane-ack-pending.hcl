# NP106: a per-key lane that lets ten messages of its keys be in flight at once.
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
  consumer {
    max_ack_pending = 10 # ERROR: NP106
  }
}
