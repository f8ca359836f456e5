# Consumers that together set every consumer field to a value other than its default.
stream "CONS" {
  subjects = ["cons.>"]
}

consumer "CONS" "pull_all" {
  description        = "pull, every pull limit"
  deliver_policy     = "by_start_sequence"
  opt_start_seq      = 5
  ack_policy         = "explicit"
  ack_wait           = "10s"
  backoff            = ["10s", "30s"]
  max_deliver        = 5
  filter_subject     = "cons.a"
  replay_policy      = "original"
  sample_freq        = "50%"
  max_waiting        = 64
  max_ack_pending    = 20
  headers_only       = true
  max_batch          = 10
  max_expires        = "30s"
  max_bytes          = 1048576
  inactive_threshold = "1h"
  num_replicas       = 1
  mem_storage        = true
  metadata           = { owner = "team-a" }
  priority_groups    = ["jobs"]
  priority_policy    = "pinned_client"
  priority_timeout   = "1m"
}

consumer "CONS" "pull_time" {
  deliver_policy  = "by_start_time"
  opt_start_time  = "2026-01-02T15:04:05Z"
  ack_policy      = "all"
  filter_subjects = ["cons.b.*", "cons.c.*"]
  priority_groups = ["g1"]
  priority_policy = "overflow"
  pause_until     = "2030-01-01T00:00:00Z"
}

consumer "CONS" "pull_prio" {
  deliver_policy  = "last_per_subject"
  filter_subject  = "cons.d.>"
  ack_policy      = "explicit"
  priority_groups = ["p1"]
  priority_policy = "prioritized"
}

consumer "CONS" "pull_none" {
  deliver_policy = "new"
  ack_policy     = "none"
}

consumer "CONS" "push" {
  deliver_subject = "deliver.push"
  deliver_group   = "grp"
  deliver_policy  = "last"
  ack_policy      = "explicit"
  rate_limit_bps  = 1000000
  flow_control    = true
  idle_heartbeat  = "5s"
}

consumer "CONS" "push_fc" {
  deliver_subject = "deliver.fc"
  ack_policy      = "flow_control"
  flow_control    = true
  idle_heartbeat  = "1s"
}

consumer "WORK" "worker" {
  ack_policy      = "explicit"
  max_ack_pending = 100
}
