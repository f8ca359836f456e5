natsplan { project = "p" }

environment "prod" {
  servers = "nats://a:4222"
  token   = "s3cr3t" # ERROR: token = env("PROD_NATS_TOKEN")
}
