package plan

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// undeclared plans the live objects the files do not declare: this project's are
// deleted (unless their metadata keeps them), the rest are unmanaged. A stream's delete
// lists every consumer that goes with it, this project's or not.
func (c *computer) undeclared() {
	consumers := consumersByStream(c.live)
	for _, name := range c.inv.streamNames(c.live) {
		if _, ok := c.desired.Streams[name]; ok {
			continue
		}
		ls := c.live.Streams[name]
		addr := ls.Address()
		if ls.Config.Metadata[model.MetaRole] == model.RoleLock {
			continue // natsplan's own (the apply lock's bucket)
		}
		if ls.Owner() != c.desired.Project || c.desired.Project == "" {
			c.unmanaged(&Object{Address: addr, Kind: kindOf(ls), Name: name, Owner: ls.Owner(),
				Reason: unmanagedReason(ls.Owner())})
			continue
		}
		if c.keepStream(ls, consumers[name]) {
			continue
		}
		c.deleted[name] = true
		var others []string
		for _, lc := range consumers[name] {
			if lc.IsSystem() || lc.Config.Durable == "" {
				others = append(others, lc.Name)
				continue
			}
			ch := &Change{Address: lc.Address(), Kind: model.KindConsumer, Name: lc.Name, Stream: name, Action: ActDelete,
				Before: rawJSON(liveConsumerConfig(lc.Config)), LiveHash: Hash(lc.Config),
				Reason: "no longer declared; its stream is deleted too"}
			if lc.Owner() != c.desired.Project {
				ch.Reason = fmt.Sprintf("not owned by this project (%s): deleted with its stream %s, "+
					"its position and ack state are lost", unmanagedReason(lc.Owner()), addr)
			}
			c.add(ch)
		}
		ch := &Change{Address: addr, Kind: kindOf(ls), Name: name, Action: ActDelete,
			Before: rawJSON(liveConfig(ls.Config)), LiveHash: Hash(ls.Config),
			Reason: "owned by this project and no longer declared"}
		if ls.State != nil && ls.State.Msgs > 0 {
			ch.Destructive = true
			verb := "are"
			if ls.State.Msgs == 1 {
				verb = "is"
			}
			ch.Reason += fmt.Sprintf("; %s %s lost", messages(ls.State.Msgs, "its"), verb)
		}
		if len(others) > 0 {
			ch.Reason += fmt.Sprintf("; %d ephemeral or server-made consumer(s) go with it (%s)",
				len(others), abbreviate(others, 5))
		}
		c.add(ch)
	}
	for _, k := range c.inv.consumerKeys(c.live) {
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
				c.unmanaged(&Object{Address: lc.Address(), Kind: model.KindConsumer, Name: lc.Name, Owner: lc.Owner(),
					Reason: unmanagedReason(lc.Owner())})
			}
			continue
		}
		if c.badMetadata(lc.Address(), nil, lc.Config.Metadata, metaDeleteRefusal) {
			continue
		}
		if lc.Config.Metadata[model.MetaPreventDestroy] == "true" {
			c.finding(finding.CodePreventDestroy, finding.SevError, lc.Address(), "", fmt.Sprintf(
				"%s is no longer declared but its metadata has %s = true: declare it again, or remove the "+
					"metadata mark before deleting it", lc.Address(), model.MetaPreventDestroy))
			continue
		}
		c.add(&Change{Address: lc.Address(), Kind: model.KindConsumer, Name: lc.Name, Stream: k.Stream, Action: ActDelete,
			Before: rawJSON(liveConsumerConfig(lc.Config)), LiveHash: Hash(lc.Config),
			Reason: "owned by this project and no longer declared; its ack state is lost"})
	}
}

// keepStream reports whether an owned, undeclared stream with these live consumers must
// not be deleted, and says why: its metadata, or that of a consumer that would go with it, protects it or can
// not be read.
func (c *computer) keepStream(ls *model.Stream, consumers []*model.Consumer) bool {
	addr := ls.Address()
	kept := c.badMetadata(addr, nil, ls.Config.Metadata, metaDeleteRefusal)
	if !kept && ls.Config.Metadata[model.MetaPreventDestroy] == "true" {
		c.finding(finding.CodePreventDestroy, finding.SevError, addr, "", fmt.Sprintf(
			"%s is no longer declared but its metadata has %s = true: declare it again, or remove the "+
				"metadata mark (nats stream edit) before deleting it", addr, model.MetaPreventDestroy))
		kept = true
	}
	for _, key := range slices.Sorted(maps.Keys(c.offline)) {
		if strings.HasPrefix(key, "consumer."+ls.Name+".") {
			c.finding(finding.CodeOffline, finding.SevError, addr, "", fmt.Sprintf(
				"%s is no longer declared, but its consumer %s is offline on the server (%s): natsplan can not "+
					"see whose it is, and deleting the stream would delete it; bring the server's peers back and plan again",
				addr, key, c.offline[key]))
			kept = true
		}
	}
	for _, lc := range consumers {
		if lc.IsSystem() || lc.Config.Durable == "" {
			continue
		}
		if c.badMetadata(lc.Address(), nil, lc.Config.Metadata, "natsplan does not delete it, nor its stream "+addr+
			", and apply refuses to run until it is corrected") {
			kept = true
			continue
		}
		if lc.Config.Metadata[model.MetaPreventDestroy] == "true" {
			c.finding(finding.CodePreventDestroy, finding.SevError, addr, "", fmt.Sprintf(
				"%s is no longer declared but deleting it would delete %s, whose metadata has %s = true: "+
					"declare the stream again, or remove the consumer's mark first", addr, lc.Address(), model.MetaPreventDestroy))
			kept = true
		}
	}
	return kept
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

// abbreviate joins the first n items and says how many more there are.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
