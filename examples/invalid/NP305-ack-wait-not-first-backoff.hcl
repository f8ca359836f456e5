# NP305: the server's first redelivery waits the first backoff step (1s). Without
# pedantic mode it would keep ack_wait = 1s while the file says 10s; natsplan's pedantic
# request is refused.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer "ORDERS" "audit" {
  ack_policy = "explicit"
  ack_wait   = "10s" # ERROR: NP305
  backoff    = ["1s", "10s"]
}
