natsplan {
  project = "t"
}

consumer "ORDERS" "audit" {
  direct = true # ERROR: Argument not allowed
}
