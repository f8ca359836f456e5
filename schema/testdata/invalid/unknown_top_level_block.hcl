natsplan {
  project = "t"
}

streams "ORDERS" { # ERROR: Unsupported block type; Blocks of type "streams" are not expected here. Did you mean "stream"?
}
