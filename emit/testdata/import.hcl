natsplan {
  project = "imp"
}

stream "CNT" {
  subjects          = ["cnt.>"]
  max_age           = "7d"
  deny_purge        = true
  allow_msg_counter = true
  allow_atomic      = true
}

kv "all" {
  history = 3
  source {
    name = "plain"
  }
  source {
    name          = "sessions"
    opt_start_seq = 2
  }
  source {
    name = "LIM"
    subject_transform {
      src  = "lim.a.>"
      dest = "$KV.all.>"
    }
  }
  source {
    name = "all"
    external {
      api = "$JS.hub.API"
    }
  }
}

kv "plain" {
}

consumer "KV_plain" "audit" {
  ack_policy = "explicit"
}

kv "replica" {
  mirror {
    name = "sessions"
  }
}

kv "sessions" {
  description      = "sessions"
  storage          = "memory"
  history          = 5
  ttl              = "1h"
  limit_marker_ttl = "10m"
  max_value_size   = "64KiB"
  max_bytes        = "256MiB"
  compression      = "s2"
  metadata = {
    owner = "web"
  }
  republish {
    src          = "$KV.sessions.>"
    dest         = "sess.>"
    headers_only = true
  }
}

stream "KV_tweaked" {
  # kv tweaked differs from what a kv block declares, so it is imported as a stream.
  subjects             = ["$KV.tweaked.>"]
  max_msgs             = 500
  max_msgs_per_subject = 1
  discard              = "new"
  allow_direct         = true
  deny_delete          = true
  allow_rollup_hdrs    = true
}

stream "LIM" {
  description             = "limits"
  subjects                = ["lim.a.>", "lim.b.*"]
  max_consumers           = 10
  max_msgs                = 1000
  max_bytes               = "1MiB"
  max_age                 = "1d12h"
  max_msgs_per_subject    = 5
  max_msg_size            = 1000
  discard                 = "new"
  storage                 = "memory"
  duplicate_window        = "1m30s"
  allow_direct            = true
  discard_new_per_subject = true
  deny_delete             = true
  allow_rollup_hdrs       = true
  allow_msg_ttl           = true
  metadata = {
    team = "orders"
  }
  subject_transform {
    src  = "lim.a.>"
    dest = "limt.a.>"
  }
  republish {
    src          = ">"
    dest         = "rp.>"
    headers_only = true
  }
  consumer_limits {
    inactive_threshold = "1h"
    max_ack_pending    = 100
  }
  lifecycle {
    prevent_destroy = true
  }
}

consumer "LIM" "limited" {
  ack_policy      = "explicit"
  filter_subjects = ["limt.a.x", "lim.b.*"]
}

stream "MIR" {
  mirror {
    name           = "LIM"
    opt_start_seq  = 2
    filter_subject = "lim.a.>"
  }
}

object_store "assets" {
  description = "images"
  storage     = "memory"
  ttl         = "30d"
  max_bytes   = "512MiB"
  compression = "s2"
  metadata = {
    owner = "web"
  }
}

object_store "files" {
}

stream "PLAIN" {
}

consumer "PLAIN" "defaults" {
}

consumer "PLAIN" "flow" {
  ack_policy      = "flow_control"
  deliver_subject = "push.f"
}

consumer "PLAIN" "group" {
  deliver_policy  = "last"
  ack_policy      = "all"
  ack_wait        = "45s"
  deliver_subject = "push.g"
  deliver_group   = "g"
}

consumer "PLAIN" "overflow" {
  ack_policy      = "explicit"
  priority_groups = ["o"]
  priority_policy = "overflow"
}

consumer "PLAIN" "pinned" {
  deliver_policy  = "new"
  ack_policy      = "explicit"
  priority_groups = ["PCG"]
  priority_policy = "pinned_client"
}

consumer "PLAIN" "prio" {
  deliver_policy   = "last_per_subject"
  ack_policy       = "explicit"
  filter_subject   = "PLAIN"
  priority_groups  = ["a"]
  priority_policy  = "prioritized"
  priority_timeout = "1m"
}

consumer "PLAIN" "pull" {
  description        = "every pull field"
  deliver_policy     = "by_start_sequence"
  opt_start_seq      = 5
  ack_policy         = "explicit"
  max_deliver        = 5
  backoff            = ["10s", "1h30m"]
  filter_subject     = "PLAIN"
  replay_policy      = "original"
  sample_freq        = "50%"
  max_waiting        = 10
  max_ack_pending    = 20
  headers_only       = true
  max_batch          = 10
  max_expires        = "5s"
  max_bytes          = "1MiB"
  inactive_threshold = "2d"
  num_replicas       = 1
  mem_storage        = true
  metadata = {
    a = "b"
  }
}

consumer "PLAIN" "push" {
  deliver_policy  = "by_start_time"
  opt_start_time  = "2026-01-02T03:04:05Z"
  rate_limit_bps  = 1000000
  flow_control    = true
  deliver_subject = "push.p"
  idle_heartbeat  = "5s"
}

stream "SRC" {
  source {
    name = "LIM"
    subject_transform {
      src  = "lim.b.*"
      dest = "src.b.{{wildcard(1)}}"
    }
  }
  source {
    name           = "TTL"
    opt_start_time = "2026-01-02T03:04:05Z"
    filter_subject = "ttl.a"
  }
  source {
    name = "PLAIN"
    consumer {
      name            = "feed"
      deliver_subject = "feed.deliver"
    }
    external {
      api     = "$JS.hub.API"
      deliver = "dlv.hub"
    }
  }
}

stream "TTL" {
  subjects                  = ["ttl.>"]
  retention                 = "interest"
  max_age                   = "1s500ms"
  no_ack                    = true
  compression               = "s2"
  first_seq                 = 100
  subject_delete_marker_ttl = "5s"
}

stream "WQ" {
  subjects            = ["wq.>"]
  retention           = "workqueue"
  allow_msg_schedules = true
  persist_mode        = "async"
  allow_batched       = true
}

consumer "WQ" "worker" {
  ack_policy   = "explicit"
  num_replicas = 1
}
