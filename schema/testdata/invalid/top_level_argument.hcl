natsplan {
  project = "t"
}

replicas = 3 # ERROR: Unsupported argument
