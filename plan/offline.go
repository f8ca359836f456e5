package plan

import (
	"fmt"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// offlineObjects indexes the reasons of live.Offline by address.
func offlineObjects(live *model.Model) map[string]string {
	out := map[string]string{}
	for _, o := range live.Offline {
		out[o.Address] = o.Reason
	}
	return out
}

// isOffline reports whether the object at key (its JetStream address) is offline and,
// if so, records an error: natsplan never creates, changes or deletes an object whose
// live config it can not read, since a create could collide with it and an update
// could undo what it does not see.
func (c *computer) isOffline(key, addr string, d *model.Decl) bool {
	reason, ok := c.offline[key]
	if !ok {
		return false
	}
	c.finding(finding.CodeOffline, finding.SevError, addr, d.String(), fmt.Sprintf(
		"%s is offline on the server (%s): natsplan can not read its config, so it neither creates nor changes it; "+
			"bring the server's peers back (nats server report jetstream) and plan again", key, reason))
	return true
}
