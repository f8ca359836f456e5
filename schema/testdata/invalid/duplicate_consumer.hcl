natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
}
consumer "ORDERS" "audit" { # ERROR: Duplicate consumer
}
