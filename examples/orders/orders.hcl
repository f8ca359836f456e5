# Orders per customer: every event of one customer is handled in order, while
# customers advance in parallel. ORDERS is partitioned 8 ways by customer; the
# fulfilment group has one lane (durable consumer) per partition, each delivering one
# message at a time, and 4 worker processes pull from every lane. The email group is a
# plain shared pool: one durable, 4 workers, no ordering. Messages fulfilment gives up
# on land in ORDERS_DLQ, which natsplan generates.
natsplan {
  project = "orders"
}

stream "ORDERS" {
  description = "Order events, published as orders.<customer>.<event>"
  subjects    = ["orders.>"]
  storage     = "file"
  retention   = "limits"
  max_age     = "72h"
}

# Stored as <partition>.orders.<customer>.<event>: consumers filter on that form.
subject_mapping "orders_by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 8
  key        = [1]
}

consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "orders_by_customer" # lanes fulfilment-0 .. fulfilment-7
  ordering = "per_key"            # max_ack_pending = 1 on every lane
  consumer {
    ack_wait    = "30s"
    max_deliver = 5
  }
  workers {
    count            = 4
    fetch_batch      = 1
    fetch_expires    = "5s"
    concurrency      = 1
    handler          = "io"
    max_handler_time = "10s"
  }
  dead_letter { stream = "ORDERS_DLQ" }
}

consumer_group "email" {
  stream          = "ORDERS"
  filter_subjects = ["*.orders.*.created"]
  consumer {
    max_ack_pending = 200
  }
  workers {
    count       = 4
    fetch_batch = 50 # 4 × 50 = 200 in flight: every worker gets work
  }
}

# Who may do what. `natsplan permissions examples/orders` derives each service's
# least-privilege NATS permissions from these blocks and the topology above: its
# subjects, the pull, ack and info subjects of every lane it consumes, and a reply
# inbox of its own (_INBOX_<service>).
service "checkout" {
  publishes = ["orders.*.created"]
}

service "fulfilment" {
  consumes  = [consumer_group.fulfilment] # every lane, fulfilment-0 .. fulfilment-7
  publishes = ["orders.*.shipped"]
  reads     = [stream.ORDERS_DLQ] # dead letters by sequence, and the messages they name
}

service "email" {
  consumes = [consumer_group.email]
}
