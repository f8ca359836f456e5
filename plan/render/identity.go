package render

import "github.com/natsplan/natsplan/plan"

// TargetIdentity names a target for the heading of an environment's section, as the
// renderers of several environments write it ("nats://a:4222 (server n1, cluster
// east, API level 5)", or "not reached"): status uses it for its sections too.
func TargetIdentity(t plan.Target) string { return targetIdentity(t) }
