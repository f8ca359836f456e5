# NP203: two consumers of a workqueue stream both read jobs.ship.*.
natsplan { project = "shop" }

stream "JOBS" {
  subjects  = ["jobs.>"]
  retention = "workqueue"
}

consumer "JOBS" "billing" {
  filter_subject = "jobs.>"
  ack_policy     = "explicit"
}

consumer "JOBS" "shipping" {
  filter_subject = "jobs.ship.*" # ERROR: NP203
  ack_policy     = "explicit"
}
