package schema

import (
	"maps"
	"reflect"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/natsplan/natsplan/model"
)

// mappingJSON is the subject_mapping {} block as decoded.
type mappingJSON struct {
	Stream      string `json:"stream"`
	Source      string `json:"source"`
	Partitions  int    `json:"partitions"`
	Key         []int  `json:"key"`
	Destination string `json:"destination"`
}

func mappingSpec() *objectSpec {
	return &objectSpec{name: "subject_mapping", goType: reflect.TypeFor[mappingJSON](), fields: []field{
		str("stream"), str("source"), integer("partitions"), {json: "key", kind: kInts}, str("destination"),
	}, required: []string{"stream", "source", "partitions"}}
}

// workersJSON is the workers {} block as decoded.
type workersJSON struct {
	Count          int           `json:"count"`
	FetchBatch     int           `json:"fetch_batch"`
	FetchExpires   time.Duration `json:"fetch_expires"`
	Concurrency    int           `json:"concurrency"`
	Handler        string        `json:"handler"`
	MaxHandlerTime time.Duration `json:"max_handler_time"`
}

// groupJSON is the consumer_group {} block as decoded, without its nested blocks.
type groupJSON struct {
	Stream         string   `json:"stream"`
	Mapping        string   `json:"mapping"`
	Ordering       string   `json:"ordering"`
	FilterSubjects []string `json:"filter_subjects"`
}

// templateSpec is a consumer block inside a consumer_group: every consumer field,
// except the names, which the group generates.
func templateSpec() *objectSpec {
	spec := consumerSpec()
	spec.fields = append([]field(nil), spec.fields...)
	for i, f := range spec.fields {
		if f.json == "durable_name" || f.json == "name" {
			spec.fields[i].why = "the group names its consumers: the group name, or <group>-<partition> with a mapping"
		}
	}
	return spec
}

func groupSpec() *objectSpec {
	return &objectSpec{name: "consumer_group", goType: reflect.TypeFor[groupJSON](), fields: []field{
		str("stream"), str("mapping"), enum("ordering", "per_key", "none"), strs("filter_subjects"),
		object("consumer", templateSpec()),
		object("workers", &objectSpec{name: "workers", goType: reflect.TypeFor[workersJSON](), fields: []field{
			integer("count"), integer("fetch_batch"), duration("fetch_expires"), integer("concurrency"),
			enum("handler", "io", "cpu"), duration("max_handler_time"),
		}}),
		deadLetterSpec(),
		lifecycleSpec(true),
	}, required: []string{"stream"}}
}

// maxPartitions bounds subject_mapping partitions: each partition becomes a consumer
// of one stream, and the server's default limit is 1000 consumers per stream.
const maxPartitions = 1024

func (st *loadState) mapping(b *hclsyntax.Block) {
	name, ok, d := st.named(b, "subject_mapping")
	out := d.object(d.blockItems(b), mappingSpec(), "", b.DefRange())
	var mj mappingJSON
	st.decodeInto(d, out, &mj, b)
	if mj.Partitions > maxPartitions {
		d.errorf(d.fields["partitions"], "Value out of range",
			"partitions must be at most %d (each partition becomes a consumer of the stream); %d is too many.", maxPartitions, mj.Partitions)
		mj.Partitions = 0
		ok = false
	}
	st.diags = append(st.diags, d.diags...)
	if ok {
		st.m.Mappings[name] = &model.SubjectMapping{Name: name, Stream: mj.Stream, Source: mj.Source,
			Partitions: mj.Partitions, Key: mj.Key, Destination: mj.Destination,
			Decl: &model.Decl{Range: b.DefRange(), Fields: d.fields}}
	}
}

func (st *loadState) group(b *hclsyntax.Block) {
	name, ok, d := st.named(b, "consumer_group")
	out := d.object(d.blockItems(b), groupSpec(), "", b.DefRange())
	g := &model.ConsumerGroup{Name: name, TemplateFields: map[string]bool{},
		Decl: &model.Decl{Range: b.DefRange(), Fields: d.fields}}
	lc := takeLifecycle(out)
	g.Lifecycle = lc
	g.DeadLetter = deadLetter(out, d.fields)
	if tmpl, ok := out["consumer"].(map[string]any); ok {
		for k := range maps.Keys(tmpl) {
			g.TemplateFields[k] = true
		}
		take(out, "consumer", &g.Template)
	}
	if _, ok := out["workers"]; ok {
		var w workersJSON
		take(out, "workers", &w)
		g.Workers = &model.Workers{Count: w.Count, FetchBatch: w.FetchBatch, FetchExpires: w.FetchExpires,
			Concurrency: w.Concurrency, Handler: w.Handler, MaxHandlerTime: w.MaxHandlerTime, Decl: subDecl(d.fields, "workers")}
	}
	var gj groupJSON
	st.decodeInto(d, out, &gj, b)
	st.diags = append(st.diags, d.diags...)
	g.Stream, g.Mapping, g.Ordering, g.FilterSubjects = gj.Stream, gj.Mapping, gj.Ordering, gj.FilterSubjects
	if ok {
		st.m.Groups[name] = g
	}
}
