natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
}
service "reader" {
  writes = [stream.ORDERS] # ERROR: writes takes references to kv, object_store
}
