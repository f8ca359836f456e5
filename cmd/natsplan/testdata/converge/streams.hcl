# Streams that together set every stream field a single server accepts to a value other
# than its default (num_replicas and placement need a cluster: see the cluster test).
natsplan {
  project = "converge"
}

stream "ALPHA" {
  description             = "interest, memory, every limit"
  subjects                = ["alpha.>"]
  retention               = "interest"
  max_consumers           = 10
  max_msgs                = 1000
  max_bytes               = "1MiB"
  max_age                 = "1h"
  max_msgs_per_subject    = 10
  max_msg_size            = "64KiB"
  discard                 = "new"
  discard_new_per_subject = true
  storage                 = "memory"
  duplicate_window        = "30s"
  allow_direct            = true
  deny_delete             = true
  deny_purge              = true
  metadata                = { team = "alpha" }
  subject_transform {
    src  = "alpha.in.>"
    dest = "alpha.stored.>"
  }
  republish {
    src          = "alpha.>"
    dest         = "repub.alpha.>"
    headers_only = true
  }
  consumer_limits {
    inactive_threshold = "1h"
    max_ack_pending    = 500
  }
}

stream "BRAVO" {
  subjects                  = ["bravo.>"]
  compression               = "s2"
  first_seq                 = 100
  no_ack                    = true
  allow_msg_ttl             = true
  subject_delete_marker_ttl = "1m"
  allow_rollup_hdrs         = true
  allow_atomic              = true
}

stream "CHARLIE" {
  subjects            = ["charlie.>"]
  allow_msg_schedules = true
  allow_rollup_hdrs   = true
}

stream "DELTA" {
  subjects          = ["delta.>"]
  allow_msg_counter = true
}

stream "ECHO" {
  subjects      = ["echo.>"]
  persist_mode  = "async"
  allow_batched = true
}

stream "FOXTROT" {
  description = "a mirror of BRAVO"
  mirror {
    name           = "BRAVO"
    opt_start_seq  = 100
    subject_transform {
      src  = "bravo.>"
      dest = "fox.>"
    }
  }
}

stream "GOLF" {
  subjects = ["golf.>"]
  source {
    name           = "ALPHA"
    filter_subject = "alpha.stored.>"
    opt_start_time = "2026-01-02T15:04:05Z"
  }
  source {
    name = "CHARLIE"
    subject_transform {
      src  = "charlie.a.>"
      dest = "golf.a.>"
    }
    subject_transform {
      src  = "charlie.b.>"
      dest = "golf.b.>"
    }
  }
}

stream "WORK" {
  subjects  = ["work.>"]
  retention = "workqueue"
}
