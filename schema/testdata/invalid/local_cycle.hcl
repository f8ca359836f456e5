natsplan {
  project = "t"
}

locals {
  a = local.b # ERROR: Cycle in local values
  b = local.a
}
