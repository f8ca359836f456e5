# A small shop: orders flow into ORDERS, a workqueue of shipping jobs is drained by a
# pool of workers, and ORDERS_ARCHIVE keeps a long-lived copy of every order.
natsplan {
  project = "shop"
}

variable "replicas" {
  type        = number
  default     = 1
  description = "Replicas for every stream: 1 on a single server, 3 in a cluster."
}

locals {
  retention_days = 3
}

stream "ORDERS" {
  description          = "Every order event, by customer and event type"
  subjects             = ["orders.>"]
  storage              = "file"
  retention            = "limits"
  max_age              = "${local.retention_days * 24}h"
  max_bytes            = "1GiB"
  max_msgs_per_subject = 1000
  duplicate_window     = "5m"
  num_replicas         = var.replicas
  allow_direct         = true
  lifecycle {
    prevent_destroy = true
  }
}

stream "SHIPPING" {
  description  = "Shipping jobs: each is done once, by one worker"
  subjects     = ["shipping.jobs.>"]
  retention    = "workqueue"
  discard      = "new"
  max_msgs     = 100000
  num_replicas = var.replicas
}

stream "ORDERS_ARCHIVE" {
  description  = "A year of orders, compressed"
  storage      = "file"
  compression  = "s2"
  max_age      = "365d"
  num_replicas = var.replicas
  source {
    name           = "ORDERS"
    filter_subject = "orders.*.created"
  }
}

consumer "ORDERS" "audit" {
  description     = "Writes every order event to the audit log"
  deliver_policy  = "all"
  ack_policy      = "explicit"
  ack_wait        = "1m"
  max_deliver     = 10
  backoff         = ["1m", "5m", "15m"]
  max_ack_pending = 500
  dead_letter {
    stream = "SHOP_DLQ" # created by natsplan: captures the advisories of messages that ran out of deliveries
  }
}

consumer "ORDERS" "invoicing" {
  description     = "Creates invoices for new orders"
  filter_subjects = ["orders.*.created", "orders.*.amended"]
  ack_policy      = "explicit"
  ack_wait        = "45s"
  max_ack_pending = 200
  max_batch       = 50
}

consumer "SHIPPING" "dispatch" {
  description     = "The shipping worker pool: every worker binds this one durable"
  ack_policy      = "explicit"
  ack_wait        = "2m"
  max_deliver     = 5
  max_ack_pending = 64
  max_waiting     = 128
  dead_letter {
    stream = "SHOP_DLQ"
  }
}
