natsplan {
  project = "t"
}

stream "ORDERS" {
  retention = "workqeue" # ERROR: Invalid retention value; "workqeue" is not a valid retention; use "limits", "interest" or "workqueue". Did you mean "workqueue"?
}
