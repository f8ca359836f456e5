// Package permissions derives least-privilege NATS permissions from the desired
// model: one set for every service block, and two for natsplan itself (the read-only
// natsplan-plan role and the natsplan-apply role). It is a pure function of the
// model: no I/O, nothing read from the server.
package permissions

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/model"
)

// The built-in roles every project gets.
const (
	// PlanRole may run plan, drift and status: it reads the JetStream API and nothing else.
	PlanRole = "natsplan-plan"
	// ApplyRole may create, update and delete the project's declared objects, and take
	// the apply lock.
	ApplyRole = "natsplan-apply"
)

// api is the JetStream API prefix natsplan and the client libraries use without a
// JetStream domain.
const api = "$JS.API."

// Subjects is one direction of a permission: what is allowed and what is denied.
type Subjects struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// Permissions is what one user may publish and subscribe to, in the server's terms.
type Permissions struct {
	Publish   Subjects `json:"publish"`
	Subscribe Subjects `json:"subscribe"`
	// AllowResponses lets a user publish to the reply subject of a request it
	// received. Services here only make requests of JetStream, so it is always off;
	// the field is there so the document has the server's shape.
	AllowResponses bool `json:"allow_responses"`
}

// Role is the permissions of one user: a service or a built-in role.
type Role struct {
	Name string
	// Service is the service block the role comes from; nil for the built-in roles.
	Service *model.Service
	// InboxPrefix is the prefix the user's client must use for reply subjects.
	InboxPrefix string
	Permissions Permissions
}

// Derive returns the roles of every service of m, in name order, followed by the
// two built-in roles. References the model does not resolve are skipped: schema
// reports them when the files are loaded.
func Derive(m *model.Model) []*Role {
	var roles []*Role
	for _, name := range slices.Sorted(maps.Keys(m.Services)) {
		roles = append(roles, serviceRole(m, m.Services[name]))
	}
	return append(roles, planRole(), applyRole(m))
}

// set collects subjects, deduplicated and sorted on the way out.
type set map[string]bool

func (s set) add(subjects ...string) {
	for _, x := range subjects {
		s[x] = true
	}
}

func (s set) list() []string {
	out := make([]string, 0, len(s))
	for x := range s {
		out = append(out, x)
	}
	sort.Strings(out)
	return out
}

func permissionsOf(pub, sub set) Permissions {
	return Permissions{Publish: Subjects{Allow: pub.list(), Deny: []string{}},
		Subscribe: Subjects{Allow: sub.list(), Deny: []string{}}}
}

func serviceRole(m *model.Model, s *model.Service) *Role {
	pub, sub := set{}, set{}
	pub.add(s.Publishes...)
	sub.add(s.InboxPrefix + ".>")
	for _, c := range Consumed(m, s) {
		// nats.go's pull consumer reads CONSUMER.INFO when it binds, pulls with
		// MSG.NEXT and acknowledges (ack, nak, term, in progress) on $JS.ACK.
		pub.add(api+"CONSUMER.INFO."+c.Stream+"."+c.Name, api+"CONSUMER.MSG.NEXT."+c.Stream+"."+c.Name,
			"$JS.ACK."+c.Stream+"."+c.Name+".>")
	}
	for _, addr := range s.Reads {
		st := streamOf(m, addr)
		if st == nil {
			continue
		}
		pub.add(readStream(st)...)
		if st.Kind == model.KindObjectStore {
			pub.add(readObjects(st)...)
		}
		// A dead letter names the message it stands for by its sequence in the
		// source stream: reading the dead letters means getting those messages, and
		// nats.go reads a stream's info before it gets a message from it.
		for _, src := range deadLetterSources(m, st.Name) {
			pub.add(readStream(src)...)
		}
	}
	for _, addr := range s.Writes {
		st := streamOf(m, addr)
		if st == nil {
			continue
		}
		pub.add(readStream(st)...)
		switch st.Kind {
		case model.KindKV:
			pub.add("$KV." + st.Bucket + ".>")
		case model.KindObjectStore:
			// A put publishes chunks and the object's meta, then purges the chunks
			// of the version it replaced.
			pub.add(readObjects(st)...)
			pub.add("$O."+st.Bucket+".>", api+"STREAM.PURGE."+st.Name)
		}
	}
	return &Role{Name: s.Name, Service: s, InboxPrefix: s.InboxPrefix, Permissions: permissionsOf(pub, sub)}
}

// Consumed returns the consumers a service fetches from: every lane of the groups it
// consumes, and the consumers it names, in key order.
func Consumed(m *model.Model, s *model.Service) []*model.Consumer {
	want := map[model.ConsumerKey]bool{}
	for _, addr := range s.Consumes {
		kind, rest, _ := strings.Cut(addr, ".")
		switch kind {
		case "consumer_group":
			for _, c := range m.Consumers {
				if c.Group == "consumer_group."+rest {
					want[c.Key()] = true
				}
			}
		case "consumer":
			stream, name, _ := strings.Cut(rest, ".")
			if _, ok := m.Consumers[model.ConsumerKey{Stream: stream, Name: name}]; ok {
				want[model.ConsumerKey{Stream: stream, Name: name}] = true
			}
		}
	}
	var out []*model.Consumer
	for _, k := range m.ConsumerKeys() {
		if want[k] {
			out = append(out, m.Consumers[k])
		}
	}
	return out
}

// streamOf resolves a stream, kv or object_store address to the stream holding it.
func streamOf(m *model.Model, addr string) *model.Stream {
	kind, rest, _ := strings.Cut(addr, ".")
	name := rest
	switch kind {
	case "kv":
		name = "KV_" + rest
	case "object_store":
		name = "OBJ_" + rest
	}
	return m.Streams[name]
}

// readStream is stream info and getting messages: by sequence, or for a bucket by
// key. Clients use the direct get API when the stream allows it.
func readStream(st *model.Stream) []string {
	return append([]string{api + "STREAM.INFO." + st.Name}, getMessage(st)...)
}

func getMessage(st *model.Stream) []string {
	out := []string{api + "STREAM.MSG.GET." + st.Name}
	if st.Config.AllowDirect {
		out = append(out, api+"DIRECT.GET."+st.Name)
		if st.Kind != model.KindStream {
			// Last message of a key's subject: $JS.API.DIRECT.GET.KV_b.$KV.b.<key>.
			out = append(out, api+"DIRECT.GET."+st.Name+".>")
		}
	}
	return out
}

// readObjects is what nats.go needs to read an object's chunks: an ordered consumer
// on the store's stream, which it creates, answers flow control for, and deletes.
func readObjects(st *model.Stream) []string {
	return []string{api + "CONSUMER.CREATE." + st.Name + ".>", api + "CONSUMER.DELETE." + st.Name + ".>",
		"$JS.FC." + st.Name + ".>"}
}

// deadLetterSources are the streams whose dead letters go to stream dl.
func deadLetterSources(m *model.Model, dl string) []*model.Stream {
	var out []*model.Stream
	seen := map[string]bool{}
	for _, k := range m.ConsumerKeys() {
		c := m.Consumers[k]
		if c.DeadLetter != nil && c.DeadLetter.Stream == dl && !seen[c.Stream] && m.Streams[c.Stream] != nil {
			seen[c.Stream] = true
			out = append(out, m.Streams[c.Stream])
		}
	}
	return out
}

// planSubjects are the requests plan, drift and status send (internal/jsapi and
// observe): account info, the stream and consumer lists and infos, and the user info
// the server answers for every account. Replies come on the default _INBOX prefix,
// which no service uses.
var planSubjects = []string{
	api + "INFO",
	api + "STREAM.LIST",
	api + "STREAM.INFO.*",
	api + "CONSUMER.LIST.*",
	api + "CONSUMER.INFO.*.*",
	"$SYS.REQ.USER.INFO",
}

func planRole() *Role {
	pub, sub := set{}, set{}
	pub.add(planSubjects...)
	sub.add("_INBOX.>")
	return &Role{Name: PlanRole, InboxPrefix: "_INBOX", Permissions: permissionsOf(pub, sub)}
}

// DefaultLockBucket is the apply lock's bucket when the lock block names none.
const DefaultLockBucket = "natsplan_lock"

func applyRole(m *model.Model) *Role {
	pub, sub := set{}, set{}
	pub.add(planSubjects...)
	sub.add("_INBOX.>")
	for _, name := range m.StreamNames() {
		for _, op := range []string{"CREATE", "UPDATE", "DELETE"} {
			pub.add(api + "STREAM." + op + "." + name)
		}
	}
	for _, k := range m.ConsumerKeys() {
		for _, op := range []string{"CREATE", "DELETE", "PAUSE"} {
			pub.add(api + "CONSUMER." + op + "." + k.Stream + "." + k.Name)
		}
	}
	if m.Lock != nil {
		pub.add(lockSubjects(m.Lock.Bucket, m.Project)...)
	}
	return &Role{Name: ApplyRole, InboxPrefix: "_INBOX", Permissions: permissionsOf(pub, sub)}
}

// lockSubjects are what internal/lock sends: open or create the bucket, read, create,
// update and delete the project's lease, and watch it (an ordered consumer) while
// waiting for another holder.
func lockSubjects(bucket, project string) []string {
	if bucket == "" {
		bucket = DefaultLockBucket
	}
	st := "KV_" + bucket
	return []string{
		api + "STREAM.CREATE." + st,
		api + "STREAM.MSG.GET." + st,
		api + "DIRECT.GET." + st,
		api + "DIRECT.GET." + st + ".$KV." + bucket + "." + project,
		api + "CONSUMER.CREATE." + st + ".>",
		api + "CONSUMER.DELETE." + st + ".>",
		"$JS.FC." + st + ".>",
		"$KV." + bucket + "." + project,
	}
}

// InDomain returns roles with the JetStream API subjects of a JetStream domain
// ($JS.<domain>.API.…), which clients that name the domain send instead of $JS.API.…;
// acks and flow control keep their subjects. An empty domain returns roles unchanged.
func InDomain(roles []*Role, domain string) []*Role {
	if domain == "" {
		return roles
	}
	rewrite := func(subjects []string) []string {
		out := make([]string, len(subjects))
		for i, s := range subjects {
			if rest, ok := strings.CutPrefix(s, api); ok {
				s = "$JS." + domain + ".API." + rest
			}
			out[i] = s
		}
		sort.Strings(out)
		return out
	}
	out := make([]*Role, len(roles))
	for i, r := range roles {
		c := *r
		c.Permissions.Publish.Allow = rewrite(r.Permissions.Publish.Allow)
		c.Permissions.Subscribe.Allow = rewrite(r.Permissions.Subscribe.Allow)
		out[i] = &c
	}
	return out
}
