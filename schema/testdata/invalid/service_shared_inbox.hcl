natsplan {
  project = "shop"
}
service "a" {
  inbox_prefix = "_INBOX_shop"
}
service "b" {
  inbox_prefix = "_INBOX_shop" # ERROR: overlaps service "a"'s _INBOX_shop.>
}
