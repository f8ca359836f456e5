natsplan {
  project = "t"
}

object_store "my assets" { # ERROR: Invalid object_store name
}
