# Buckets for a web shop: sessions that expire, feature flags with history that are
# republished to the app, a read replica of the flags, a bucket that gathers the
# per-region carts, and object stores for product images and nightly reports.
natsplan {
  project = "shop-kv"
}

variable "replicas" {
  type        = number
  default     = 1
  description = "Replicas for every bucket: 1 on a single server, 3 in a cluster."
}

# Web sessions: kept in memory, gone an hour after their last write. With a limit
# marker, a watcher sees a delete marker when a session expires. Memory storage is lost
# when the server restarts: with --embedded, whose server runs only as long as one
# command, every run creates this bucket again.
kv "sessions" {
  description      = "Web sessions by session id"
  storage          = "memory"
  history          = 1
  ttl              = "1h"
  limit_marker_ttl = "10m"
  max_value_size   = "64KiB"
  max_bytes        = "256MiB"
  num_replicas     = var.replicas
}

# Feature flags: every change is kept (last 10) and republished to flags.changed.<key>
# so running services pick it up without a watcher.
kv "flags" {
  description  = "Feature flags; keys are flag names"
  history      = 10
  max_bytes    = "16MiB"
  compression  = "s2"
  num_replicas = var.replicas
  republish {
    src  = "$KV.flags.>"
    dest = "flags.changed.>"
  }
  metadata = {
    owner = "platform"
  }
  lifecycle {
    prevent_destroy = true
  }
}

# A read replica of the flags for another team's services.
kv "flags_replica" {
  description  = "Read-only mirror of flags"
  history      = 10
  num_replicas = var.replicas
  mirror {
    name = "flags"
  }
}

kv "carts_eu" {
  description  = "Carts written by the EU region"
  history      = 3
  ttl          = "7d"
  num_replicas = var.replicas
}

kv "carts_us" {
  description  = "Carts written by the US region"
  history      = 3
  ttl          = "7d"
  num_replicas = var.replicas
}

# One bucket that sees every region's carts: each source's keys are mapped into it.
kv "carts" {
  description  = "All carts, sourced from the regional buckets"
  history      = 3
  ttl          = "7d"
  num_replicas = var.replicas
  source {
    name = "carts_eu"
  }
  source {
    name = "carts_us"
  }
}

object_store "product_images" {
  description  = "Product photos, served by the web tier"
  max_bytes    = "5GiB"
  compression  = "s2"
  num_replicas = var.replicas
  metadata = {
    owner = "catalog"
  }
}

object_store "reports" {
  description  = "Nightly reports, kept for 30 days"
  ttl          = "30d"
  max_bytes    = "1GiB"
  num_replicas = var.replicas
}
