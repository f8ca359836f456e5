natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = ["orders.>"]
}
consumer_group "email" {
  stream   = "ORDERS"
  ordering = "perkey" # ERROR: Did you mean "per_key"?
}
