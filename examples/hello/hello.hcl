# The smallest useful natsplan configuration: one stream and one pull consumer.
natsplan {
  project = "hello"
}

stream "GREETINGS" {
  subjects = ["greetings.>"]
  max_age  = "24h"
}

consumer "GREETINGS" "printer" {
  ack_policy      = "explicit"
  ack_wait        = "30s"
  max_ack_pending = 100
}
