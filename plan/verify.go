package plan

import (
	"fmt"
	"strings"

	"github.com/natsplan/natsplan/model"
)

// Verify checks a saved plan against what the server holds now: the same target, and
// every object the plan touches exactly as it was when planned (same normalised config
// hash, still absent, or still present). It returns one line per problem; none means
// the plan may be applied as it is.
func Verify(p *Plan, live *model.Model) []string {
	var problems []string
	problems = append(problems, verifyTarget(p.Target, live.Target)...)
	seen := map[string]bool{}
	for _, ch := range p.Changes {
		// The first change of an object holds the hash of the object before the plan;
		// later steps of a split change hold the state their earlier steps leave.
		if seen[ch.Address] {
			continue
		}
		seen[ch.Address] = true
		now := liveHashOf(live, ch)
		switch {
		case ch.LiveHash == "" && now != "":
			problems = append(problems, fmt.Sprintf("%s was created on the server after planning", ch.Address))
		case ch.LiveHash != "" && now == "":
			problems = append(problems, fmt.Sprintf("%s was deleted from the server after planning", ch.Address))
		case ch.LiveHash != now:
			how := changedFields(live, ch)
			if how == "" {
				how = fmt.Sprintf("config hash %s, planned against %s", short(now), short(ch.LiveHash))
			}
			problems = append(problems, fmt.Sprintf("%s changed on the server after planning (%s)", ch.Address, how))
		}
	}
	return problems
}

// liveHashOf is the hash Compute records for the object a change acts on, or "" when
// the object does not exist.
func liveHashOf(live *model.Model, ch *Change) string {
	if ch.Kind == model.KindConsumer {
		if lc := live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; lc != nil {
			return Hash(lc.Config)
		}
		return ""
	}
	if ls := live.Streams[ch.Name]; ls != nil {
		return Hash(ls.Config)
	}
	return ""
}

// maxVerifyFields bounds how many changed fields a refusal lists per object.
const maxVerifyFields = 5

// changedFields says how an object changed since planning: the fields whose live value
// differs from the change's Before (the live config when planned), as
// "path planned -> now", so the refusal says how, not only that. It is "" when the
// plan kept no Before (a create) or the diff finds nothing; the caller then shows the hashes.
func changedFields(live *model.Model, ch *Change) string {
	if len(ch.Before) == 0 {
		return ""
	}
	planned := mapOf(ch.Before)
	if planned == nil {
		return ""
	}
	var now map[string]any
	if ch.Kind == model.KindConsumer {
		if lc := live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; lc != nil {
			now = mapOf(liveConsumerConfig(lc.Config))
		}
	} else if ls := live.Streams[ch.Name]; ls != nil {
		now = mapOf(liveConfig(ls.Config))
	}
	if now == nil {
		return ""
	}
	fields := diffMaps("", planned, now)
	var parts []string
	for i, f := range fields {
		if i == maxVerifyFields {
			parts = append(parts, fmt.Sprintf("and %d more", len(fields)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s -> %s", f.Path, show(f.Before), show(f.After)))
	}
	return strings.Join(parts, ", ")
}

// verifyTarget compares the planned target with the live one. In a cluster the client
// may reach another node than at planning, so the cluster name identifies the target;
// a single server is identified by its name.
func verifyTarget(planned Target, t *model.Target) []string {
	if t == nil {
		return []string{"the server did not identify itself"}
	}
	var problems []string
	check := func(what, want, got string) {
		if want != got {
			problems = append(problems, fmt.Sprintf("the plan was made against %s %q, but this server is %s %q", what, want, what, got))
		}
	}
	if planned.Cluster != "" || t.Cluster != "" {
		check("cluster", planned.Cluster, t.Cluster)
	} else {
		check("server", planned.Server, t.Server)
	}
	check("domain", planned.Domain, t.Domain)
	check("account", planned.Account, t.Account)
	return problems
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	if h == "" {
		return "(absent)"
	}
	return h
}
