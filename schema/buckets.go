package schema

import (
	"reflect"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// bucketJSON is a kv {} or object_store {} block as decoded.
type bucketJSON struct {
	Description    string                 `json:"description"`
	MaxValueSize   int32                  `json:"max_value_size"`
	History        int                    `json:"history"`
	TTL            time.Duration          `json:"ttl"`
	MaxBytes       int64                  `json:"max_bytes"`
	Storage        string                 `json:"storage"`
	Replicas       int                    `json:"num_replicas"`
	Placement      *server.Placement      `json:"placement"`
	RePublish      *server.RePublish      `json:"republish"`
	Mirror         *server.StreamSource   `json:"mirror"`
	Sources        []*server.StreamSource `json:"sources"`
	Compression    string                 `json:"compression"`
	LimitMarkerTTL time.Duration          `json:"limit_marker_ttl"`
	Metadata       map[string]string      `json:"metadata"`
}

// objectStoreSpec is the object_store block; kvSpec adds the KV-only fields.
func objectStoreSpec() *objectSpec {
	return &objectSpec{name: "object_store", goType: reflect.TypeFor[bucketJSON](), fields: []field{
		str("description"), duration("ttl"), size("max_bytes"), enum("storage", storageValues...),
		integer("num_replicas"), object("placement", placementSpec()), enum("compression", compressionValues...),
		metadata(), lifecycleSpec(false),
	}}
}

func kvSpec() *objectSpec {
	spec := objectStoreSpec().with(
		size("max_value_size"), integer("history"), object("republish", republishSpec()),
		object("mirror", sourceSpec("mirror")), objects("sources", "source", sourceSpec("source")),
		duration("limit_marker_ttl"),
	)
	spec.name = "kv"
	return spec
}

func (st *loadState) bucket(b *hclsyntax.Block) {
	name := b.Labels[0]
	ok := true
	if !bucketName.MatchString(name) {
		st.errorf(b.LabelRanges[0], "Invalid "+b.Type+" name",
			"%q is not a valid bucket name: use only letters, digits, '_' and '-'.", name)
		ok = false
	}
	ok = ok && st.unique(b.Type+"."+name, b.Type, b.LabelRanges[0])
	spec := objectStoreSpec()
	if b.Type == "kv" {
		spec = kvSpec()
	}
	d := newDecoder(st.ctx, st.inline)
	out := d.object(d.blockItems(b), spec, "", b.DefRange())
	lc := takeLifecycle(out)
	var bj bucketJSON
	st.decodeInto(d, out, &bj, b)
	st.diags = append(st.diags, d.diags...)
	if !ok {
		return
	}
	decl := &model.Decl{Range: b.DefRange(), Fields: d.fields}
	if b.Type == "object_store" {
		st.m.ObjectStores[name] = &model.ObjectStore{Bucket: name, Description: bj.Description, TTL: bj.TTL,
			MaxBytes: bj.MaxBytes, Storage: bj.Storage, Replicas: bj.Replicas, Placement: bj.Placement,
			Compression: bj.Compression, Metadata: bj.Metadata, Lifecycle: lc, Decl: decl}
		return
	}
	st.m.KVs[name] = &model.KV{Bucket: name, Description: bj.Description, MaxValueSize: bj.MaxValueSize,
		History: bj.History, TTL: bj.TTL, MaxBytes: bj.MaxBytes, Storage: bj.Storage, Replicas: bj.Replicas,
		Placement: bj.Placement, RePublish: bj.RePublish, Mirror: bj.Mirror, Sources: bj.Sources,
		Compression: bj.Compression, LimitMarkerTTL: bj.LimitMarkerTTL, Metadata: bj.Metadata,
		Lifecycle: lc, Decl: decl}
}
