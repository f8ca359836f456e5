natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
}
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 2
  key        = [1]
}
consumer_group "fulfilment" {
  stream  = "ORDERS"
  mapping = "by_customer"
}
service "worker" {
  consumes = [
    consumer.ORDERS["fulfilment-0"],
    consumer.ORDERS["fulfilment-2"], # ERROR: service "worker" consumes consumer.ORDERS.fulfilment-2, which is not declared
  ]
}
