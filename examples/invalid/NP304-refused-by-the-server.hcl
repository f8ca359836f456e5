# Configurations nats-server refuses. plan and validate send every create and update to a
# private in-process nats-server first, so each is an error at its attribute, with the
# server's reason, and apply sends nothing.

natsplan {
  project = "refused"
}

stream "EVENTS" {
  subjects = ["events.>"]
  max_age  = "50ms" # ERROR: NP304 the server's minimum is 100ms
}

stream "EVENTS_COPY" {
  subjects = ["copy.>"] # ERROR: NP304 a mirror takes its subjects from the origin
  mirror {
    name = "EVENTS"
  }
}

stream "EVENTS_DLQ" {
  subjects = ["dlq.events.>"]
  max_msgs = -5 # ERROR: NP305 -1 is unlimited; the server refuses other negative values
}

consumer "EVENTS_DLQ" "audit" {
  ack_policy      = "explicit"
  filter_subject  = "dlq.events.a" # ERROR: NP304 one of filter_subject or filter_subjects
  filter_subjects = ["dlq.events.b"]
}

consumer "EVENTS_DLQ" "retry" {
  ack_policy  = "explicit"
  ack_wait    = "1s"
  backoff     = ["1s", "5s", "30s"] # ERROR: NP304 three backoff steps need max_deliver of 3 or more
  max_deliver = 2
}
