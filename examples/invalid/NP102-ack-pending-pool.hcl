# NP102: five workers want 500 messages in flight; the consumer allows 100 in total.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "email" {
  stream = "ORDERS"
  consumer {
    max_ack_pending = 100
  }
  workers {
    count       = 5 # WARNING: NP102
    fetch_batch = 100
  }
}
