natsplan {
  project = "t"
}

natsplan { # ERROR: Duplicate natsplan block
  project = "u"
}
