natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = "orders.>" # ERROR: Incorrect attribute value type; subjects must be a list
}
