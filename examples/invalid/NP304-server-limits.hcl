# Refused under the target server's own JetStream limits, which no account can read:
# the natsplan block declares them (a copy of the server's jetstream { limits {} }), the
# private server that checks every change runs with them, and what the target would
# refuse is an error here, not at apply.

natsplan {
  project = "limited"
  server_limits {
    max_request_batch = 100
    max_ack_pending   = 5000
    duplicate_window  = "1m"
  }
}

stream "ORDERS" {
  subjects         = ["orders.>"]
  duplicate_window = "1m"
}

stream "AUDIT" { # ERROR: NP304 the default duplicate window, 2m, is above the limit
  subjects = ["audit.>"]
}

consumer "ORDERS" "ship" { # ERROR: NP304 a pull consumer must set max_batch under max_request_batch
  ack_policy = "explicit"
}

consumer "ORDERS" "bill" {
  ack_policy = "explicit"
  max_batch  = 500 # ERROR: NP304 above max_request_batch
}

consumer "ORDERS" "pack" {
  ack_policy      = "explicit"
  max_batch       = 100
  max_ack_pending = 10000 # ERROR: NP304 above the server's max_ack_pending
}

consumer "ORDERS" "notify" {
  ack_policy = "explicit"
  max_batch  = 50 # max_ack_pending unset: the server's default, the smaller of 1000 and 5000
}
