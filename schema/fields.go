package schema

import (
	"reflect"

	"github.com/nats-io/nats-server/v2/server"
)

// kind is how an attribute's value is written in HCL and checked.
type kind int

// The kinds of attribute values.
const (
	kString    kind = iota // a string
	kEnum                  // a string from a fixed set
	kBool                  // true or false
	kInt                   // a whole number, ranged by the Go field
	kInts                  // a list of whole numbers
	kSize                  // bytes: a number or a string with a unit
	kDuration              // a duration string, or 0
	kDurations             // a list of durations
	kStrings               // a list of strings
	kMap                   // a map of strings
	kTime                  // an RFC 3339 time
	kObject                // a nested object: a block or an object attribute
	kObjects               // a repeatable nested object: blocks or a list attribute
	kForbidden             // exists in the server's config but is not user-settable
)

// field is one row of the field table: how the attribute named by its JSON name is decoded.
type field struct {
	json   string
	kind   kind
	enum   []string    // kEnum: the accepted values
	object *objectSpec // kObject, kObjects: the nested fields
	block  string      // kObjects: the singular block name ("source" for sources)
	why    string      // kForbidden: why it cannot be set and what to do instead
}

// objectSpec is the field table of one JSON object: a config, or a nested block.
type objectSpec struct {
	name   string       // what the user calls it, for messages ("stream", "placement")
	goType reflect.Type // the struct the JSON is decoded into (ranges numbers)
	fields []field
	// required lists JSON names that must be set (natsplan blocks only: the server's
	// configs have no required fields beyond the names taken from labels).
	required []string
}

// lookup finds a field by JSON name, or by the block name of a repeatable field.
func (o *objectSpec) lookup(name string) (*field, bool) {
	for i := range o.fields {
		f := &o.fields[i]
		if f.json == name || f.block != "" && f.block == name {
			return f, true
		}
	}
	return nil, false
}

// names lists what may be written inside the object, for "did you mean".
func (o *objectSpec) names() []string {
	var out []string
	for _, f := range o.fields {
		if f.kind == kForbidden {
			continue
		}
		out = append(out, f.json)
		if f.block != "" {
			out = append(out, f.block)
		}
	}
	return out
}

// with returns a copy of the spec with extra natsplan-only fields (lifecycle, dead_letter).
func (o *objectSpec) with(extra ...field) *objectSpec {
	c := *o
	c.fields = append(append([]field(nil), o.fields...), extra...)
	return &c
}

func str(name string) field       { return field{json: name, kind: kString} }
func boolean(name string) field   { return field{json: name, kind: kBool} }
func integer(name string) field   { return field{json: name, kind: kInt} }
func size(name string) field      { return field{json: name, kind: kSize} }
func duration(name string) field  { return field{json: name, kind: kDuration} }
func strs(name string) field      { return field{json: name, kind: kStrings} }
func timestamp(name string) field { return field{json: name, kind: kTime} }
func metadata() field             { return field{json: "metadata", kind: kMap} }
func forbidden(name, why string) field {
	return field{json: name, kind: kForbidden, why: why}
}
func enum(name string, values ...string) field {
	return field{json: name, kind: kEnum, enum: values}
}
func object(name string, spec *objectSpec) field {
	return field{json: name, kind: kObject, object: spec}
}
func objects(name, block string, spec *objectSpec) field {
	return field{json: name, kind: kObjects, block: block, object: spec}
}

// The enum values, spelled as the server's JSON.
var (
	retentionValues   = []string{"limits", "interest", "workqueue"}
	discardValues     = []string{"old", "new"}
	storageValues     = []string{"file", "memory"}
	compressionValues = []string{"none", "s2"}
	persistValues     = []string{"default", "async"}
	deliverValues     = []string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"}
	ackValues         = []string{"none", "all", "explicit", "flow_control"}
	replayValues      = []string{"instant", "original"}
	priorityValues    = []string{"none", "overflow", "pinned_client", "prioritized"}
)

func transformSpec() *objectSpec {
	return &objectSpec{name: "subject_transform", goType: reflect.TypeFor[server.SubjectTransformConfig](),
		fields: []field{str("src"), str("dest")}}
}

func placementSpec() *objectSpec {
	return &objectSpec{name: "placement", goType: reflect.TypeFor[server.Placement](), fields: []field{
		str("cluster"), strs("tags"),
		forbidden("preferred", "the server refuses a preferred server in a stream's placement (it is for leader step-down requests); use cluster and tags"),
	}}
}

func republishSpec() *objectSpec {
	return &objectSpec{name: "republish", goType: reflect.TypeFor[server.RePublish](),
		fields: []field{str("src"), str("dest"), boolean("headers_only")}}
}

func sourceSpec(name string) *objectSpec {
	return &objectSpec{name: name, goType: reflect.TypeFor[server.StreamSource](), fields: []field{
		str("name"),
		field{json: "opt_start_seq", kind: kInt},
		timestamp("opt_start_time"),
		str("filter_subject"),
		objects("subject_transforms", "subject_transform", transformSpec()),
		object("external", &objectSpec{name: "external", goType: reflect.TypeFor[server.ExternalStream](),
			fields: []field{str("api"), str("deliver")}}),
		object("consumer", &objectSpec{name: "consumer", goType: reflect.TypeFor[server.StreamConsumerSource](),
			fields: []field{str("name"), str("deliver_subject")}}),
	}}
}

// streamSpec is the field table of server.StreamConfig.
func streamSpec() *objectSpec {
	return &objectSpec{name: "stream", goType: reflect.TypeFor[server.StreamConfig](), fields: []field{
		forbidden("name", "the stream name is the block label: stream \"NAME\" { ... }"),
		str("description"),
		strs("subjects"),
		enum("retention", retentionValues...),
		integer("max_consumers"),
		integer("max_msgs"),
		size("max_bytes"),
		duration("max_age"),
		integer("max_msgs_per_subject"),
		size("max_msg_size"),
		enum("discard", discardValues...),
		enum("storage", storageValues...),
		integer("num_replicas"),
		boolean("no_ack"),
		duration("duplicate_window"),
		object("placement", placementSpec()),
		object("mirror", sourceSpec("mirror")),
		objects("sources", "source", sourceSpec("source")),
		enum("compression", compressionValues...),
		integer("first_seq"),
		object("subject_transform", transformSpec()),
		object("republish", republishSpec()),
		boolean("allow_direct"),
		boolean("mirror_direct"),
		boolean("discard_new_per_subject"),
		boolean("sealed"),
		boolean("deny_delete"),
		boolean("deny_purge"),
		boolean("allow_rollup_hdrs"),
		object("consumer_limits", &objectSpec{name: "consumer_limits", goType: reflect.TypeFor[server.StreamConsumerLimits](),
			fields: []field{duration("inactive_threshold"), integer("max_ack_pending")}}),
		boolean("allow_msg_ttl"),
		duration("subject_delete_marker_ttl"),
		boolean("allow_msg_counter"),
		boolean("allow_atomic"),
		boolean("allow_msg_schedules"),
		enum("persist_mode", persistValues...),
		boolean("allow_batched"),
		metadata(),
	}}
}

// consumerSpec is the field table of server.ConsumerConfig.
func consumerSpec() *objectSpec {
	return &objectSpec{name: "consumer", goType: reflect.TypeFor[server.ConsumerConfig](), fields: []field{
		forbidden("durable_name", "the durable name is the block's second label: consumer \"STREAM\" \"NAME\" { ... }"),
		forbidden("name", "the consumer name is the block's second label: consumer \"STREAM\" \"NAME\" { ... }"),
		str("description"),
		enum("deliver_policy", deliverValues...),
		integer("opt_start_seq"),
		timestamp("opt_start_time"),
		enum("ack_policy", ackValues...),
		duration("ack_wait"),
		integer("max_deliver"),
		field{json: "backoff", kind: kDurations},
		str("filter_subject"),
		strs("filter_subjects"),
		enum("replay_policy", replayValues...),
		integer("rate_limit_bps"),
		str("sample_freq"),
		integer("max_waiting"),
		integer("max_ack_pending"),
		boolean("flow_control"),
		boolean("headers_only"),
		integer("max_batch"),
		duration("max_expires"),
		size("max_bytes"),
		str("deliver_subject"),
		str("deliver_group"),
		duration("idle_heartbeat"),
		duration("inactive_threshold"),
		integer("num_replicas"),
		boolean("mem_storage"),
		forbidden("direct", "it is set by the server on the consumers it creates for mirrors and sources"),
		forbidden("sourcing", "it is set by the server on the consumers it creates for sources"),
		metadata(),
		timestamp("pause_until"),
		strs("priority_groups"),
		enum("priority_policy", priorityValues...),
		duration("priority_timeout"),
	}}
}

// lifecycleJSON is the lifecycle {} block as decoded.
type lifecycleJSON struct {
	PreventDestroy  bool `json:"prevent_destroy"`
	ReplaceOnChange bool `json:"replace_on_change"`
}

// lifecycleSpec is the lifecycle block; streams (and buckets) are never replaced.
func lifecycleSpec(replaceable bool) field {
	replace := boolean("replace_on_change")
	if !replaceable {
		replace = forbidden("replace_on_change", "streams are never replaced: natsplan updates them in place or refuses the change and explains the migration; remove replace_on_change")
	}
	return object("lifecycle", &objectSpec{name: "lifecycle", goType: reflect.TypeFor[lifecycleJSON](),
		fields: []field{boolean("prevent_destroy"), replace}})
}

// deadLetterJSON is the dead_letter {} block as decoded.
type deadLetterJSON struct {
	Stream string `json:"stream"`
}

func deadLetterSpec() field {
	return object("dead_letter", &objectSpec{name: "dead_letter", goType: reflect.TypeFor[deadLetterJSON](),
		fields: []field{str("stream")}, required: []string{"stream"}})
}
