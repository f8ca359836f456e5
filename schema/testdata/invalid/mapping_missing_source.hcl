natsplan {
  project = "t"
}

stream "ORDERS" {
  subjects = ["orders.*"]
}

subject_mapping "by_customer" { # ERROR: Missing required argument; A subject_mapping block needs source = <value>
  stream     = "ORDERS"
  partitions = 4
}
