package plan

import (
	"fmt"
	"path"

	"github.com/natsplan/natsplan/model"
)

// undeclared plans the live objects the files do not declare: this project's are
// deleted (unless prevent_destroy is in their metadata), the rest are unmanaged.
func (c *computer) undeclared() {
	for _, name := range c.live.StreamNames() {
		if _, ok := c.desired.Streams[name]; ok {
			continue
		}
		ls := c.live.Streams[name]
		addr := ls.Address()
		if ls.Config.Metadata[model.MetaRole] != "" {
			continue // natsplan's own (the apply lock's bucket)
		}
		if ls.Owner() != c.desired.Project || c.desired.Project == "" {
			c.unmanaged(&Object{Address: addr, Kind: string(kindOf(ls)), Name: name, Owner: ls.Owner(),
				Reason: unmanagedReason(ls.Owner())})
			continue
		}
		if ls.Config.Metadata[model.MetaPreventDestroy] == "true" {
			c.finding(CodePreventDestroy, SevError, addr, "", fmt.Sprintf(
				"%s is no longer declared but its metadata has %s = true: declare it again, or remove the "+
					"metadata mark (nats stream edit) before deleting it", addr, model.MetaPreventDestroy))
			continue
		}
		c.deleted[name] = true
		for _, lc := range c.live.ConsumersOf(name) {
			if lc.IsSystem() || lc.Owner() != c.desired.Project {
				continue
			}
			c.add(&Change{Address: lc.Address(), Kind: "consumer", Name: lc.Name, Stream: name, Action: ActDelete,
				Before: rawJSON(liveConsumerConfig(lc.Config)), LiveHash: Hash(lc.Config),
				Reason: "no longer declared; its stream is deleted too"})
		}
		ch := &Change{Address: addr, Kind: string(kindOf(ls)), Name: name, Action: ActDelete,
			Before: rawJSON(liveConfig(ls.Config)), LiveHash: Hash(ls.Config),
			Reason: "owned by this project and no longer declared"}
		if ls.State != nil && ls.State.Msgs > 0 {
			ch.Destructive = true
			ch.Reason += fmt.Sprintf("; its %d messages are lost", ls.State.Msgs)
			f := c.finding(CodeDataLoss, SevError, addr, "", fmt.Sprintf(
				"deleting %s loses its %d messages (%d bytes): declare it again to keep it, or apply with --%s",
				addr, ls.State.Msgs, ls.State.Bytes, OverrideDataLoss))
			f.Overridable = OverrideDataLoss
		}
		c.add(ch)
	}
	for _, k := range c.live.ConsumerKeys() {
		if _, ok := c.desired.Consumers[k]; ok || c.deleted[k.Stream] {
			continue
		}
		lc := c.live.Consumers[k]
		ls := c.live.Streams[k.Stream]
		if lc.IsSystem() || lc.Config.Durable == "" {
			continue // server-made and ephemeral consumers are never managed nor reported
		}
		owned := lc.Owner() == c.desired.Project && c.desired.Project != ""
		if !owned {
			// Unmanaged consumers are reported only on streams this project declares;
			// an unmanaged stream already stands for its consumers, and KV and object
			// store streams get client-made consumers all the time.
			if _, declared := c.desired.Streams[k.Stream]; declared && (ls == nil || kindOf(ls) == model.KindStream) {
				c.unmanaged(&Object{Address: lc.Address(), Kind: "consumer", Name: lc.Name, Owner: lc.Owner(),
					Reason: unmanagedReason(lc.Owner())})
			}
			continue
		}
		if lc.Config.Metadata[model.MetaPreventDestroy] == "true" {
			c.finding(CodePreventDestroy, SevError, lc.Address(), "", fmt.Sprintf(
				"%s is no longer declared but its metadata has %s = true: declare it again, or remove the "+
					"metadata mark before deleting it", lc.Address(), model.MetaPreventDestroy))
			continue
		}
		c.add(&Change{Address: lc.Address(), Kind: "consumer", Name: lc.Name, Stream: k.Stream, Action: ActDelete,
			Before: rawJSON(liveConsumerConfig(lc.Config)), LiveHash: Hash(lc.Config),
			Reason: "owned by this project and no longer declared; its ack state is lost"})
		c.lastInterestConsumer(lc)
	}
}

func unmanagedReason(owner string) string {
	if owner == "" {
		return "not declared and not marked by natsplan"
	}
	return fmt.Sprintf("owned by project %q", owner)
}

// unmanaged lists an object unless the natsplan block's ignore patterns hide it.
func (c *computer) unmanaged(o *Object) {
	for _, pat := range c.desired.Ignore {
		if ok, _ := path.Match(pat, o.Address); ok {
			return
		}
		if ok, _ := path.Match(pat, o.Name); ok {
			return
		}
	}
	c.p.Unmanaged = append(c.p.Unmanaged, o)
}
