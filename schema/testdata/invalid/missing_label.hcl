natsplan {
  project = "t"
}

consumer "ORDERS" { # ERROR: Missing name for consumer; A consumer block needs 2 label(s): consumer "STREAM" "NAME" { ... }
}
