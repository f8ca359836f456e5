natsplan {
  project = "t"
}

kv "sessions" { history = 5, tll = "1h", storage = "memory" } # ERROR: Did you mean "ttl"?
