natsplan {
  project = "shop"
}
service "a" {
  inbox_prefix = "_INBOX" # ERROR: within _INBOX, every client
}
