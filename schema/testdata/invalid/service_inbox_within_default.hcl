natsplan {
  project = "shop"
}
service "a" {
  inbox_prefix = "_INBOX.a" # ERROR: within _INBOX, every client's default reply prefix
}
