natsplan {
  project = "t"
}

kv "sessions" {
}
kv "sessions" { # ERROR: Duplicate kv
}
