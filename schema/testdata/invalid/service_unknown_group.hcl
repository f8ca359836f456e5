natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
}
consumer_group "fulfilment" {
  stream = "ORDERS"
}
service "worker" {
  consumes = [consumer_group.fulfilmnet] # ERROR: Did you mean "consumer_group.fulfilment"?
}
