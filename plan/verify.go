package plan

import (
	"fmt"

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
			problems = append(problems, fmt.Sprintf("%s changed on the server after planning (config hash %s, planned against %s)", ch.Address, short(now), short(ch.LiveHash)))
		}
	}
	return problems
}

// liveHashOf is the hash Compute records for the object a change acts on, or "" when
// the object does not exist.
func liveHashOf(live *model.Model, ch *Change) string {
	if ch.Kind == "consumer" {
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
