# Two targets of one configuration: the environment blocks of docs/environments.md.
natsplan {
  project = "shop"
  expect {
    domain = "hub"
  }
}

variable "replicas" {
  type    = number
  default = 1
}

environment "staging" {
  servers   = "nats://staging-a:4222, nats://staging-b:4222"
  creds     = "/secrets/staging.creds"
  js_domain = "hub"
}

environment "prod" {
  context  = "prod-east"
  user     = "deployer"
  password = env("PROD_NATS_PASSWORD")
  tls {
    ca              = "/tls/ca.pem"
    handshake_first = true
  }
  timeout   = "10s"
  variables = { replicas = 3 }
  expect { cluster = "prod-east" }
}

stream "ORDERS" {
  subjects     = ["orders.>"]
  num_replicas = var.replicas
}
