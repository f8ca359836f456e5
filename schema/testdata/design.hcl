# A tour of the language's blocks (docs/language.md), plus the variable it uses.
variable "replicas" {
  type    = number
  default = 3
}

natsplan {
  project = "shop"              # ownership mark written into the metadata of every object
  expect {                      # optional guard: refuse to run against another target
    cluster = "prod-east"
    domain  = "hub"
  }
}

stream "ORDERS" {
  subjects     = ["orders.>"]
  storage      = "file"
  retention    = "limits"
  max_age      = "72h"
  max_bytes    = "10GiB"
  num_replicas = var.replicas
  placement { cluster = "east" }
  lifecycle { prevent_destroy = true }
}

consumer "ORDERS" "audit" {     # stream name, durable name
  filter_subjects = ["*.orders.*.*"] # filters see stored subjects, after the mapping below
  ack_policy      = "explicit"
  ack_wait        = "30s"
  max_ack_pending = 500
}

kv "sessions"        { history = 5, ttl = "1h", storage = "memory" }
object_store "assets" { max_bytes = "5GiB", compression = "s2" }

subject_mapping "orders_by_customer" {
  stream     = "ORDERS"         # becomes that stream's subject_transform
  source     = "orders.*.*"     # orders.<customer>.<event>
  partitions = 8
  key        = [1]              # wildcards hashed into the partition (1-based)
  # destination defaults to "{{partition(8,1)}}.orders.{{wildcard(1)}}.{{wildcard(2)}}":
  # the partition number first, the layout orbit.go consumer groups expect; set it to override
}

consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "orders_by_customer"   # one consumer (lane) per partition: fulfilment-0 .. -7
  ordering = "per_key"              # each lane delivers one message at a time
  consumer {                        # template for every generated consumer
    ack_wait    = "30s"
    max_deliver = 5
  }
  workers {                         # how the worker processes pull; checked, not sent
    count            = 4
    fetch_batch      = 1
    concurrency      = 1            # messages handled at once in one process
    handler          = "io"         # "io" (waits) or "cpu" (computes)
    max_handler_time = "10s"
  }
  dead_letter { stream = "ORDERS_DLQ" }  # captures max-deliveries and terminated advisories
}

consumer_group "email" {            # no mapping: one shared durable "email" for all workers
  stream          = "ORDERS"
  filter_subjects = ["*.orders.*.created"]
  consumer { max_ack_pending = 200 }
  workers { count = 4, fetch_batch = 50 }
}
