natsplan { # ERROR: Missing project name
}
stream "ORDERS" {
}
