natsplan {
  project = "t"
}

stream "ORD.ERS" { # ERROR: Invalid stream name; "ORD.ERS" is not a valid stream name: it contains '.'
}
