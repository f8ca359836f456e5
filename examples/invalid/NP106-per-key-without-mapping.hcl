# NP106: per-key order asked for, but nothing partitions the keys.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "fulfilment" {
  stream   = "ORDERS"
  ordering = "per_key" # ERROR: NP106
}
