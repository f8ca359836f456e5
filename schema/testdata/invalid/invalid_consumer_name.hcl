natsplan {
  project = "t"
}

consumer "ORDERS" "my audit" { # ERROR: Invalid consumer name
}
