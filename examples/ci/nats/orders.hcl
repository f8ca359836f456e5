# The topology the workflow in .github/workflows/natsplan.yml plans and applies.
natsplan {
  project = "orders"
  # Refuse to run against anything but production: a wrong NATS_URL secret fails
  # before anything is read or written.
  # expect {
  #   cluster = "prod-east"
  # }
  lock {
    ttl = "30s"
  }
}

stream "ORDERS" {
  description  = "Order events by customer"
  subjects     = ["orders.>"]
  max_age      = "30d"
  max_bytes    = "1GiB"
  num_replicas = 1
}

consumer "ORDERS" "billing" {
  ack_policy      = "explicit"
  ack_wait        = "1m"
  max_ack_pending = 200
  max_deliver     = 5
  filter_subjects = ["orders.*.created"]
  dead_letter {
    stream = "ORDERS_DLQ"
  }
}

kv "order_status" {
  description = "Latest status per order id"
  history     = 5
  ttl         = "90d"
}
