natsplan {
  project = "shop"
}
service "checkout" {
  publish = ["orders.>"] # ERROR: Did you mean "publishes"?
}
