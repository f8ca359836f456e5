natsplan {
  project = "t"
}

stream "ORDERS" {
  name = "OTHER" # ERROR: Argument not allowed; "name" cannot be set in a stream block: the stream name is the block label
}
