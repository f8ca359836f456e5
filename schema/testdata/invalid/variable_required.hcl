natsplan {
  project = "t"
}

variable "replicas" { # ERROR: No value for required variable; var.replicas has no default and no value
  type = number
}
