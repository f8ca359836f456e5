natsplan {
  project = "t"
}

variable "replicas" {
  type    = number
  default = "three" # ERROR: Invalid default value for variable
}
