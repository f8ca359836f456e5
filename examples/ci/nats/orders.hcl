# The topology the workflow in .github/workflows/natsplan.yml plans and applies, in
# two environments: staging (one server) and prod (a three-node cluster). One pull
# request shows both plans in one comment; one merge applies both.
natsplan {
  project = "orders"
  lock {
    ttl = "30s"
  }
}

# Where each environment is. The workflow exports the URLs and writes each
# environment's credentials file from the repository's secrets; nothing secret is
# written here (a password or token could only be env("NAME")).
environment "staging" {
  servers = env("STAGING_NATS_URL")
  creds   = env("STAGING_NATS_CREDS")
  variables = {
    replicas  = 1
    retention = "7d"
  }
}

environment "prod" {
  servers = env("PROD_NATS_URL")
  creds   = env("PROD_NATS_CREDS")
  variables = {
    replicas  = 3
    retention = "30d"
  }
  # Refuse to run against anything but production: a wrong PROD_NATS_URL secret
  # fails before anything is read or written.
  expect {
    cluster = "prod-east"
  }
}

variable "replicas" {
  type        = number
  description = "Replicas of every stream: 1 on a single server, 3 in the cluster."
}

variable "retention" {
  type        = string
  description = "How long order events are kept."
}

stream "ORDERS" {
  description  = "Order events by customer"
  subjects     = ["orders.>"]
  max_age      = var.retention
  max_bytes    = "1GiB"
  num_replicas = var.replicas
}

consumer "ORDERS" "billing" {
  ack_policy      = "explicit"
  ack_wait        = "1m"
  max_ack_pending = 200
  max_deliver     = 5
  filter_subjects = ["orders.*.created"]
  dead_letter {
    stream = "ORDERS_DLQ"
  }
}

kv "order_status" {
  description = "Latest status per order id"
  history     = 5
  ttl         = "90d"
}
