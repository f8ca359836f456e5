natsplan {
  project = "shop"
}
service "checkout" {
  publishes = ["orders..created"] # ERROR: "orders..created" is not a valid subject
}
