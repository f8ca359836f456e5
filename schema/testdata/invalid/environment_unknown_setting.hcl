natsplan { project = "p" }

environment "prod" {
  sevrers = "nats://a:4222" # ERROR: Did you mean "servers"?
}
