// Package groups holds the end-to-end tests of partitioned subject mappings, consumer
// groups and dead-letter streams: the configs natsplan generates are created on an
// in-process nats-server and real pull workers (nats.go) run against them.
package groups
