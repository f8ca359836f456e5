natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = ["orders.>" "x"] # ERROR: Missing item separator
}
