natsplan {
  project = "t"
}

stream "ORDERS" {
}
stream "ORDERS" { # ERROR: Duplicate stream; stream.ORDERS is already declared at testdata/invalid/duplicate_stream.hcl:5:8
}
