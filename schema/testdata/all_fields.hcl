# Sets every user-settable field of a stream and of a consumer, mixing the block and
# attribute forms of nested objects. Not a config a server would accept as a whole
# (a mirror with sources); it proves every field decodes.
natsplan {
  project = "all"
  expect {
    server  = "n1"
    cluster = "east"
    domain  = "hub"
    account = "APP"
  }
  ignore = ["KV_tmp*", "scratch-*"]
  lock {
    bucket = "natsplan_lock"
    ttl    = "30s"
  }
}

stream "EVERYTHING" {
  description             = "every field"
  subjects                = ["every.>", "thing.*"]
  retention               = "interest"
  max_consumers           = 10
  max_msgs                = 1000000
  max_bytes               = "10GiB"
  max_age                 = "7d"
  max_msgs_per_subject    = 5
  max_msg_size            = "1MiB"
  discard                 = "new"
  storage                 = "memory"
  num_replicas            = 3
  no_ack                  = true
  duplicate_window        = "1m30s"
  compression             = "s2"
  first_seq               = 42
  allow_direct            = true
  mirror_direct           = true
  discard_new_per_subject = true
  sealed                  = true
  deny_delete             = true
  deny_purge              = true
  allow_rollup_hdrs       = true
  allow_msg_ttl           = true
  subject_delete_marker_ttl = "1h"
  allow_msg_counter       = true
  allow_atomic            = true
  allow_msg_schedules     = true
  persist_mode            = "async"
  allow_batched           = true
  metadata                = { team = "orders", tier = "gold" }

  placement {
    cluster = "east"
    tags    = ["ssd", "az1"]
  }
  subject_transform = { src = "every.>", dest = "all.>" }
  republish {
    src          = "every.>"
    dest         = "copy.>"
    headers_only = true
  }
  consumer_limits {
    inactive_threshold = "10m"
    max_ack_pending    = 100
  }
  mirror {
    name           = "ORIGIN"
    opt_start_seq  = 7
    opt_start_time = "2026-01-02T15:04:05Z"
    filter_subject = "origin.>"
    subject_transform {
      src  = "origin.a.>"
      dest = "a.>"
    }
    subject_transform {
      src  = "origin.b.>"
      dest = "b.>"
    }
    external {
      api     = "$JS.hub.API"
      deliver = "deliver.hub"
    }
    consumer {
      name            = "mirror-feed"
      deliver_subject = "feed.mirror"
    }
  }
  source {
    name           = "S1"
    opt_start_seq  = 3
    opt_start_time = "2026-02-03T04:05:06Z"
    filter_subject = "s1.>"
    subject_transform {
      src  = "s1.>"
      dest = "one.>"
    }
    external {
      api     = "$JS.leaf.API"
      deliver = "deliver.leaf"
    }
    consumer {
      name            = "source-feed"
      deliver_subject = "feed.source"
    }
  }
  lifecycle {
    prevent_destroy = true
  }
}

stream "LISTED" {
  max_age = null # null means unset, as in Terraform
  sources = [
    { name = "S1", filter_subject = "s1.>" },
    { name = "S2", external = { api = "$JS.x.API", deliver = "d.x" }, subject_transforms = [{ src = "s2.>", dest = "x.>" }] },
  ]
}

consumer "EVERYTHING" "every" {
  description        = "every field"
  deliver_policy     = "by_start_time"
  opt_start_seq      = 9
  opt_start_time     = "2026-01-02T15:04:05.5+02:00"
  ack_policy         = "explicit"
  ack_wait           = "45s"
  max_deliver        = 5
  backoff            = ["1s", "5s", 0]
  filter_subject     = "every.one"
  filter_subjects    = ["every.a", "every.b"]
  replay_policy      = "original"
  rate_limit_bps     = 1000000
  sample_freq        = "50%"
  max_waiting        = 128
  max_ack_pending    = 64
  flow_control       = true
  headers_only       = true
  max_batch          = 10
  max_expires        = "30s"
  max_bytes          = "1MB"
  deliver_subject    = "push.every"
  deliver_group      = "workers"
  idle_heartbeat     = "5s"
  inactive_threshold = "1h"
  num_replicas       = 1
  mem_storage        = true
  metadata           = { owner = "team-a" }
  pause_until        = "2030-01-01T00:00:00Z"
  priority_groups    = ["A", "B"]
  priority_policy    = "pinned_client"
  priority_timeout   = "2m"
  lifecycle {
    prevent_destroy   = true
    replace_on_change = true
  }
  dead_letter {
    stream = "DLQ"
  }
}
