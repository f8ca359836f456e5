# One topology, two places. dev is a single small server; staging keeps more and for
# longer. Both get the same streams and consumers; only the values differ.
#
#   natsplan plan --embedded .embedded examples/environments
#
# plans both against two in-process servers (.embedded/dev and .embedded/staging);
# against real servers, set DEV_NATS_URL, STAGING_NATS_URL and STAGING_NATS_CREDS.
natsplan {
  project = "payments"
}

environment "dev" {
  servers = env("DEV_NATS_URL")
  variables = {
    retention = "1d"
    max_bytes = "256MiB"
    lanes     = 2
  }
}

environment "staging" {
  servers = env("STAGING_NATS_URL")
  creds   = env("STAGING_NATS_CREDS")
  variables = {
    retention = "14d"
    max_bytes = "4GiB"
    lanes     = 4
  }
}

variable "retention" {
  type        = string
  description = "How long payments are kept."
}

variable "max_bytes" {
  type        = string
  description = "Storage cap of the PAYMENTS stream."
}

variable "lanes" {
  type        = number
  default     = 2
  description = "Partitions of the settlement consumer group: per-account order within each."
}

stream "PAYMENTS" {
  description = "Payment events by account"
  subjects    = ["payments.>"]
  max_age     = var.retention
  max_bytes   = var.max_bytes
  discard     = "old"
}

subject_mapping "by_account" {
  stream     = "PAYMENTS"
  source     = "payments.*.*"
  partitions = var.lanes
  key        = [1]
}

consumer_group "settlement" {
  stream   = "PAYMENTS"
  mapping  = "by_account" # lanes settlement-0 .. settlement-<lanes-1>
  ordering = "per_key"
  consumer {
    ack_wait    = "30s"
    max_deliver = 5
  }
  workers {
    count            = 2
    fetch_batch      = 1
    concurrency      = 1
    max_handler_time = "10s"
  }
  dead_letter {
    stream = "PAYMENTS_DLQ"
  }
}
