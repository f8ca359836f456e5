natsplan {
  project = "shop"
}
kv "sessions" {}
service "site" { reads = [kv.session] } # ERROR: Did you mean "kv.sessions"?
