package permissions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// The codes of the permission checks; each has a page docs/rules/<code>.md.
const (
	CodeUncaptured      = "NP601"
	CodeUnconsumedGroup = "NP602"
	CodeReservedPublish = "NP603"
	CodeChanged         = "NP604"
)

// Severity of an issue, spelled as plan's finding severities.
type Severity string

// The severities.
const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevInfo    Severity = "info"
)

// Issue is the result of one permission check.
type Issue struct {
	Code     string
	Severity Severity
	Address  string
	Range    hcl.Range
	Message  string
}

// reserved are subject spaces a service reaches through the model, never by a
// publishes entry: the JetStream API and acks, KV and object store writes, and the
// system account.
var reserved = []struct{ subject, use string }{
	{"$JS.>", "the JetStream API, acks and advisories: consumes and reads grant what a client needs"},
	{"$KV.>", "KV writes: use writes = [kv.NAME]"},
	{"$O.>", "object store writes: use writes = [object_store.NAME]"},
	{"$SYS.>", "the system account"},
}

// Check runs the permission checks on the services of m. A model without services
// is not checked: permissions are opt-in.
func Check(m *model.Model) []*Issue {
	if len(m.Services) == 0 {
		return nil
	}
	var out []*Issue
	deadLetters := map[string]bool{}
	for _, c := range m.Consumers {
		if c.DeadLetter != nil {
			deadLetters[c.DeadLetter.Stream] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Services)) {
		s := m.Services[name]
		r := s.Decl.FieldRange("publishes")
		for _, p := range s.Publishes {
			if !server.IsValidSubject(p) {
				continue // reported when the files were loaded
			}
			if res, ok := reservedOverlap(p); ok {
				out = append(out, &Issue{CodeReservedPublish, SevError, s.Address(), r,
					fmt.Sprintf("publishes %q reaches %s, which is %s; remove it from publishes.", p, res.subject, res.use)})
				continue
			}
			if dl, subj, ok := deadLetterOverlap(m, deadLetters, p); ok {
				out = append(out, &Issue{CodeReservedPublish, SevError, s.Address(), r,
					fmt.Sprintf("publishes %q overlaps %q, a subject of dead-letter stream %s: a service publishing there forges dead letters; narrow the subject.", p, subj, dl)})
				continue
			}
			if !captured(m, p) {
				out = append(out, &Issue{CodeUncaptured, SevWarning, s.Address(), r,
					fmt.Sprintf("publishes %q, which no declared stream captures whole: those messages are core NATS only, and a JetStream publish of them gets no ack. Fine for core NATS; otherwise add the subject to a stream.", p)})
			}
		}
	}
	consumed := map[string]bool{}
	for _, s := range m.Services {
		for _, addr := range s.Consumes {
			consumed[addr] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Groups)) {
		g := m.Groups[name]
		if consumed[g.Address()] {
			continue
		}
		var r hcl.Range
		if g.Decl != nil {
			r = g.Decl.Range
		}
		out = append(out, &Issue{CodeUnconsumedGroup, SevInfo, g.Address(), r,
			fmt.Sprintf("no service consumes %s, so natsplan permissions grants nobody its lanes; add it to a service's consumes, or ignore this if its workers use credentials of their own.", g.Address())})
	}
	return out
}

func reservedOverlap(p string) (struct{ subject, use string }, bool) {
	for _, r := range reserved {
		if server.SubjectsCollide(p, r.subject) {
			return r, true
		}
	}
	return struct{ subject, use string }{}, false
}

func deadLetterOverlap(m *model.Model, deadLetters map[string]bool, p string) (stream, subject string, ok bool) {
	for _, name := range slices.Sorted(maps.Keys(deadLetters)) {
		st := m.Streams[name]
		if st == nil {
			continue
		}
		for _, subj := range st.Config.Subjects {
			if server.SubjectsCollide(p, subj) {
				return name, subj, true
			}
		}
	}
	return "", "", false
}

// captured reports whether every subject p matches is stored by some declared stream.
func captured(m *model.Model, p string) bool {
	for _, name := range m.StreamNames() {
		st := m.Streams[name]
		if st.Kind != model.KindStream {
			continue
		}
		for _, subj := range st.Config.Subjects {
			if server.SubjectMatchesFilter(p, subj) {
				return true
			}
		}
	}
	return false
}

// Changes compares the permissions each service and natsplan-apply have with the
// topology before and after a change, and reports those that differ (NP604). before
// is what the server holds; the objects it holds for this project (marked with its
// name; a lane counted in its group by its metadata) stand for the previous files.
func Changes(desired, before *model.Model) []*Issue {
	if len(desired.Services) == 0 || desired.Project == "" {
		return nil
	}
	was := model.New()
	was.Project, was.Lock, was.Services = desired.Project, desired.Lock, desired.Services
	for name, st := range before.Streams {
		if st.Owner() == desired.Project {
			was.Streams[name] = st
		}
	}
	for k, c := range before.Consumers {
		if c.Owner() != desired.Project {
			continue
		}
		cc := *c
		if cc.Group == "" {
			cc.Group = c.Config.Metadata[model.MetaGroup]
		}
		was.Consumers[k] = &cc
	}
	old := map[string]*Role{}
	for _, r := range Derive(was) {
		old[r.Name] = r
	}
	var out []*Issue
	for _, r := range Derive(desired) {
		if r.Name == PlanRole {
			continue
		}
		added, removed := diff(old[r.Name].Permissions, r.Permissions)
		if len(added)+len(removed) == 0 {
			continue
		}
		var parts []string
		if len(added) > 0 {
			parts = append(parts, "adds "+brief(added))
		}
		if len(removed) > 0 {
			parts = append(parts, "removes "+brief(removed))
		}
		change := strings.Join(parts, "; ")
		if r.Service == nil {
			out = append(out, &Issue{CodeChanged, SevInfo, "role." + ApplyRole, hcl.Range{},
				fmt.Sprintf("this plan changes the permissions of %s: it %s. natsplan-apply needs the additions to create the new objects and the removals to delete the old ones: apply with the permissions of both revisions, then roll out natsplan permissions --service %s.", ApplyRole, change, ApplyRole)})
			continue
		}
		out = append(out, &Issue{CodeChanged, SevInfo, r.Service.Address(), r.Service.Decl.Range,
			fmt.Sprintf("this plan changes the permissions of service %s: it %s. Run natsplan permissions --service %s and roll the new permissions out with this change (additions before apply, removals after).", r.Name, change, r.Name)})
	}
	return out
}

// diff lists the subjects in b but not a, and in a but not b, over both directions.
func diff(a, b Permissions) (added, removed []string) {
	side := func(dir string, x, y []string) {
		in := map[string]bool{}
		for _, s := range x {
			in[s] = true
		}
		for _, s := range y {
			if !in[s] {
				added = append(added, dir+" "+s)
			}
			delete(in, s)
		}
		for _, s := range x {
			if in[s] {
				removed = append(removed, dir+" "+s)
			}
		}
	}
	side("publish", a.Publish.Allow, b.Publish.Allow)
	side("subscribe", a.Subscribe.Allow, b.Subscribe.Allow)
	return added, removed
}

// brief lists up to four subjects and counts the rest.
func brief(xs []string) string {
	const show = 4
	if len(xs) <= show {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:show], ", "), len(xs)-show)
}
