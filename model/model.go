// Package model is the one type that both the desired configuration (decoded from
// HCL by package schema) and the live server (read by package observe) are put into,
// so that plan.Compute is a pure function of two values of the same type.
//
// Configs are the nats-server's own StreamConfig and ConsumerConfig: their JSON is
// the wire format, so every field the server knows is expressible and nothing is lost
// in translation.
package model

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"
)

// Metadata keys natsplan writes into every object it manages.
const (
	// MetaProject marks an object as owned by a natsplan project.
	MetaProject = "natsplan.project"
	// MetaPreventDestroy records lifecycle.prevent_destroy so it survives the block's removal.
	MetaPreventDestroy = "natsplan.prevent_destroy"
	// MetaGroup names the consumer_group that generated a consumer.
	MetaGroup = "natsplan.group"
	// MetaWorkersPrefix prefixes the workers {} settings written on generated consumers.
	MetaWorkersPrefix = "natsplan.workers."
	// MetaRole marks streams natsplan keeps for itself (the apply lock's bucket), which
	// plans neither manage nor report as unmanaged.
	MetaRole = "natsplan.role"
	// ServerMetaPrefix is the reserved prefix of server-owned metadata keys.
	ServerMetaPrefix = "_nats."
	// MetaPrefix is the prefix of every metadata key natsplan writes or reads.
	MetaPrefix = "natsplan."
	// RoleLock is the MetaRole value of the apply lock's bucket.
	RoleLock = "lock"
)

// projectName is what a project name may look like: it is written into metadata and
// compared exactly, so it is kept to a plain, printable token.
var projectName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidProject reports whether name is a valid project name, in the files and in the
// metadata mark alike.
func ValidProject(name string) bool { return projectName.MatchString(name) }

// Kind is what an object is to the user: a stream-backed object (stream, kv,
// object_store) or a consumer. Plan changes, drift and the renderers use these values.
type Kind string

// The kinds of objects.
const (
	KindStream      Kind = "stream"
	KindKV          Kind = "kv"
	KindObjectStore Kind = "object_store"
	KindConsumer    Kind = "consumer"
)

// Decl is where an object was declared: the block's range and the range of every
// attribute that was set, keyed by its JSON path ("max_age", "placement.cluster").
type Decl struct {
	Range  hcl.Range
	Fields map[string]hcl.Range
}

// FieldRange returns the range of the attribute at path, or the block's range.
func (d *Decl) FieldRange(path string) hcl.Range {
	if d == nil {
		return hcl.Range{}
	}
	if r, ok := d.Fields[path]; ok {
		return r
	}
	return d.Range
}

// String renders the declaration as file:line:col, or "" when unknown.
func (d *Decl) String() string {
	if d == nil || d.Range.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", d.Range.Filename, d.Range.Start.Line, d.Range.Start.Column)
}

// Lifecycle holds the lifecycle {} block of a stream or consumer.
type Lifecycle struct {
	PreventDestroy  bool
	ReplaceOnChange bool
}

// Stream is a stream, KV bucket or object store. Name is the JetStream stream name
// (KV_<bucket>, OBJ_<store> for the other kinds); Bucket is the user-facing name.
type Stream struct {
	Name      string
	Kind      Kind
	Bucket    string
	Config    server.StreamConfig
	Lifecycle Lifecycle
	Decl      *Decl        // desired only
	State     *StreamState // live only
}

// StreamState is what the live server reports beyond the config.
type StreamState struct {
	Msgs     uint64
	Bytes    uint64
	FirstSeq uint64
	LastSeq  uint64
	// FirstTime and LastTime are when the oldest and the newest stored message were
	// stored (zero when empty).
	FirstTime time.Time
	LastTime  time.Time
	// NumSubjects counts the distinct subjects of the stored messages.
	NumSubjects int
	Consumers   int
	Created     time.Time
	// ReadAt is the server's clock when it reported this state, so that message ages
	// are judged without the client's clock.
	ReadAt  time.Time
	Cluster string
	Leader  string
}

// Address is the plan address of the stream ("stream.ORDERS", "kv.sessions").
func (s *Stream) Address() string {
	switch s.Kind {
	case KindKV, KindObjectStore:
		return string(s.Kind) + "." + s.Bucket
	}
	return "stream." + s.Name
}

// Owner is the project that owns the object, from its metadata.
func (s *Stream) Owner() string { return s.Config.Metadata[MetaProject] }

// ConsumerKey identifies a consumer: its stream and its durable name.
type ConsumerKey struct {
	Stream string
	Name   string
}

// String renders the key as STREAM/NAME.
func (k ConsumerKey) String() string { return k.Stream + "/" + k.Name }

// Consumer is a durable consumer of a stream.
type Consumer struct {
	Stream     string
	Name       string
	Config     server.ConsumerConfig
	Lifecycle  Lifecycle
	Group      string         // address of the consumer_group that generated it, if any
	DeadLetter *DeadLetter    // stream capturing this consumer's dead letters (desired only)
	Decl       *Decl          // desired only
	State      *ConsumerState // live only
}

// ConsumerState is what the live server reports beyond the config.
type ConsumerState struct {
	NumPending     uint64
	NumAckPending  int
	NumRedelivered int
	NumWaiting     int
	Created        time.Time
	// Delivered and AckFloor are the server's sequence pairs: the last delivery, and the
	// point below which every delivery is acknowledged, each with when it last moved.
	Delivered SeqState
	AckFloor  SeqState
	// PushBound reports a push consumer with a subscriber on its deliver subject.
	PushBound bool
	// Paused reports a consumer paused until its pause_until.
	Paused bool
}

// SeqState is a consumer and stream sequence pair and when it last moved (zero: never).
type SeqState struct {
	Consumer uint64
	Stream   uint64
	Last     time.Time
}

// Key returns the consumer's key.
func (c *Consumer) Key() ConsumerKey { return ConsumerKey{c.Stream, c.Name} }

// Address is the plan address of the consumer ("consumer.ORDERS.audit").
func (c *Consumer) Address() string { return "consumer." + c.Stream + "." + c.Name }

// Owner is the project that owns the consumer, from its metadata.
func (c *Consumer) Owner() string { return c.Config.Metadata[MetaProject] }

// IsSystem reports whether the server or a client library made this consumer for its
// own purposes (sources, mirrors, direct gets): natsplan never touches these.
func (c *Consumer) IsSystem() bool {
	if c.Config.Sourcing || c.Config.Direct {
		return true
	}
	for k := range c.Config.Metadata {
		if strings.HasPrefix(k, "_nats.src.") || strings.HasPrefix(k, "_nats.mirror.") {
			return true
		}
	}
	return false
}

// Model is a whole topology: what the files declare, or what the server holds.
type Model struct {
	// Project is the ownership mark (desired: the natsplan block; live: unused).
	Project string
	// Expect is the target guard of the natsplan block (desired only).
	Expect *Expect
	// Ignore lists glob patterns of unmanaged objects to hide from reports (desired only).
	Ignore []string
	// Lock enables the apply lock (desired only).
	Lock *Lock
	// ServerLimits are the target server's JetStream limits as the files declare them
	// (natsplan { server_limits {} }); nil when undeclared (desired only).
	ServerLimits *ServerLimits

	Streams   map[string]*Stream
	Consumers map[ConsumerKey]*Consumer
	Mappings  map[string]*SubjectMapping
	Groups    map[string]*ConsumerGroup
	// KVs and ObjectStores are the kv and object_store blocks (desired only); schema
	// also adds the streams that hold them to Streams.
	KVs          map[string]*KV
	ObjectStores map[string]*ObjectStore
	// Services are the service blocks (desired only).
	Services map[string]*Service

	// Target describes the server read (live only).
	Target *Target
	// Offline lists objects the server listed but could not report (live only), by
	// address.
	Offline []Offline
	// Files are the configuration files read, in order (desired only).
	Files []string
}

// Expect is the natsplan { expect {} } guard.
type Expect struct {
	Server  string
	Cluster string
	Domain  string
	Account string
	Decl    *Decl
}

// DefaultLockBucket is the KV bucket of the apply lock when the lock block names none.
const DefaultLockBucket = "natsplan_lock"

// ServerLimits are the server-wide JetStream limits of the target's configuration
// (jetstream { limits {} }), which no account can read, as the natsplan
// { server_limits {} } block declares them. A zero field is not declared.
type ServerLimits struct {
	MaxRequestBatch int
	MaxAckPending   int
	// Duplicates is the server's largest duplicate window (its duplicate_window limit).
	Duplicates time.Duration
	Decl       *Decl
}

// Options are the limits as the server's options hold them.
func (l *ServerLimits) Options() server.JSLimitOpts {
	if l == nil {
		return server.JSLimitOpts{}
	}
	return server.JSLimitOpts{MaxRequestBatch: l.MaxRequestBatch, MaxAckPending: l.MaxAckPending, Duplicates: l.Duplicates}
}

// Lock is the natsplan { lock {} } setting.
type Lock struct {
	Bucket string
	TTL    time.Duration
	Decl   *Decl
}

// Target is the identity and limits of the server read.
type Target struct {
	URL      string `json:"url"`
	Server   string `json:"server"`
	Cluster  string `json:"cluster,omitempty"`
	Domain   string `json:"domain,omitempty"`
	Account  string `json:"account,omitempty"`
	APILevel int    `json:"api_level"`
	Version  string `json:"version,omitempty"`
	// Limits are the account's JetStream limits (0 or -1 means unlimited).
	Limits AccountLimits `json:"-"`
	// Tiers are the account's JetStream limits as the server selects them: under ""
	// when the account has account-wide limits, else by replica tier ("R1", "R3").
	// Nil when unknown (validate).
	Tiers map[string]server.JetStreamAccountLimits `json:"-"`
	// ServerLimits are the server-wide limits the files declare (the desired model's
	// ServerLimits); nil when undeclared. Plan sets them for normalisation: the server's
	// defaults depend on them and no account can read them.
	ServerLimits *ServerLimits `json:"-"`
	// Peers is how many servers can hold a replica: 1 for a server outside a cluster,
	// the servers the cluster advertises otherwise; 0 when unknown.
	Peers int `json:"-"`
}

// AccountLimits are the JetStream limits that shape server defaults.
type AccountLimits struct {
	MaxStreams       int
	MaxConsumers     int
	MaxAckPending    int
	MaxRequestBatch  int
	MaxBytesRequired bool
}

// SubjectMapping is a partitioned subject transform applied to a stream.
type SubjectMapping struct {
	Name        string
	Stream      string
	Source      string
	Partitions  int
	Key         []int
	Destination string
	Decl        *Decl
}

// Address is the plan address of the mapping.
func (m *SubjectMapping) Address() string { return "subject_mapping." + m.Name }

// ConsumerGroup is a set of consumers generated from one template.
type ConsumerGroup struct {
	Name           string
	Stream         string
	Mapping        string
	Ordering       string
	FilterSubjects []string
	Template       server.ConsumerConfig
	TemplateFields map[string]bool // fields set in the template block
	Workers        *Workers
	DeadLetter     *DeadLetter
	Lifecycle      Lifecycle
	Decl           *Decl
}

// Address is the plan address of the group.
func (g *ConsumerGroup) Address() string { return "consumer_group." + g.Name }

// FieldRange is the range of a consumer_group attribute ("mapping",
// "consumer.ack_wait", "workers.count"), else the group block's.
func (g *ConsumerGroup) FieldRange(path string) hcl.Range {
	if g.Decl == nil {
		return hcl.Range{}
	}
	if r, ok := g.Decl.Fields[path]; ok {
		return r
	}
	if rest, ok := strings.CutPrefix(path, "workers."); ok && g.Workers != nil && g.Workers.Decl != nil {
		if r, ok := g.Workers.Decl.Fields[rest]; ok {
			return r
		}
	}
	return g.Decl.Range
}

// Workers describes how worker processes pull: checked, never sent as config.
type Workers struct {
	Count          int
	FetchBatch     int
	FetchExpires   time.Duration
	Concurrency    int
	Handler        string
	MaxHandlerTime time.Duration
	Decl           *Decl
}

// DeadLetter names the stream that captures a group's or consumer's dead letters.
type DeadLetter struct {
	Stream string
	Decl   *Decl
}

// Offline is an object the server lists but can not report the config of: a peer is
// down, or the object needs a newer server.
type Offline struct {
	// Address is the object's address: stream.NAME or consumer.STREAM.NAME.
	Address string
	// Reason is what the server said, or that the servers holding it did not answer.
	Reason string
}

// String is "address: reason", as reports print it.
func (o Offline) String() string { return o.Address + ": " + o.Reason }

// New returns an empty model.
func New() *Model {
	return &Model{
		Streams:      map[string]*Stream{},
		Consumers:    map[ConsumerKey]*Consumer{},
		Mappings:     map[string]*SubjectMapping{},
		Groups:       map[string]*ConsumerGroup{},
		KVs:          map[string]*KV{},
		ObjectStores: map[string]*ObjectStore{},
		Services:     map[string]*Service{},
	}
}

// StreamNames returns the stream names in sorted order.
func (m *Model) StreamNames() []string {
	names := make([]string, 0, len(m.Streams))
	for n := range m.Streams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ConsumerKeys returns the consumer keys in sorted order.
func (m *Model) ConsumerKeys() []ConsumerKey {
	keys := make([]ConsumerKey, 0, len(m.Consumers))
	for k := range m.Consumers {
		keys = append(keys, k)
	}
	// Keys are unique, so an unstable sort gives the one order; slices.SortFunc does
	// without sort.Slice's reflection, which a plan's several walks over thousands of
	// consumers felt.
	slices.SortFunc(keys, func(a, b ConsumerKey) int {
		if c := strings.Compare(a.Stream, b.Stream); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return keys
}

// ConsumersOf returns the consumers of stream in name order.
func (m *Model) ConsumersOf(stream string) []*Consumer {
	var out []*Consumer
	for _, k := range m.ConsumerKeys() {
		if k.Stream == stream {
			out = append(out, m.Consumers[k])
		}
	}
	return out
}

// KV is a kv {} block: a key-value bucket, stored as stream KV_<bucket>. Package schema
// turns it into a Stream of KindKV; the fields are those of the nats.go KeyValueConfig.
type KV struct {
	Bucket         string
	Description    string
	MaxValueSize   int32
	History        int
	TTL            time.Duration
	MaxBytes       int64
	Storage        string // file | memory
	Replicas       int
	Placement      *server.Placement
	RePublish      *server.RePublish
	Mirror         *server.StreamSource
	Sources        []*server.StreamSource
	Compression    string // none | s2
	LimitMarkerTTL time.Duration
	Metadata       map[string]string
	Lifecycle      Lifecycle
	Decl           *Decl
}

// ObjectStore is an object_store {} block, stored as stream OBJ_<bucket>.
type ObjectStore struct {
	Bucket      string
	Description string
	TTL         time.Duration
	MaxBytes    int64
	Storage     string // file | memory
	Replicas    int
	Placement   *server.Placement
	Compression string // none | s2
	Metadata    map[string]string
	Lifecycle   Lifecycle
	Decl        *Decl
}
