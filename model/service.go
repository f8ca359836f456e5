package model

// Service is a service {} block: a program that publishes, consumes and reads the
// declared objects, and whose least-privilege permissions package permissions
// derives from it (desired only; nothing about it is sent to the server).
type Service struct {
	Name string
	// Publishes are the subjects the service publishes to, as written.
	Publishes []string
	// Consumes are addresses of consumer groups and consumers
	// ("consumer_group.fulfilment", "consumer.ORDERS.audit").
	Consumes []string
	// Reads are addresses of streams, KV buckets and object stores read by the service.
	Reads []string
	// Writes are addresses of KV buckets and object stores the service writes.
	Writes []string
	// InboxPrefix is the prefix of the service's reply subjects, without the trailing
	// dot: "_INBOX_<name>" unless set.
	InboxPrefix string
	// Decl records the block and its attributes; an element of a list is keyed
	// "consumes[0]", "reads[1]".
	Decl *Decl
}

// Address is the address of the service ("service.checkout").
func (s *Service) Address() string { return "service." + s.Name }

// DefaultInboxPrefix is the reply-subject prefix a service gets when it sets none.
func DefaultInboxPrefix(service string) string { return "_INBOX_" + service }
