stream "ORDERS" { # ERROR: Missing natsplan block
}
