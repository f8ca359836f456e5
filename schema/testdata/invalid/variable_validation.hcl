natsplan {
  project = "t"
}

variable "replicas" {
  type    = number
  default = 2
  validation {
    condition     = contains([1, 3, 5], var.replicas) # ERROR: Invalid value for variable; var.replicas: replicas must be 1, 3 or 5
    error_message = "replicas must be 1, 3 or 5"
  }
}
