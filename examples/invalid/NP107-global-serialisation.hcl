# NP107: a shared consumer that lets one message be in flight: the whole group is serial.
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}

consumer_group "ledger" {
  stream = "ORDERS"
  consumer {
    max_ack_pending = 1 # WARNING: NP107
  }
}
