package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// What nats.go v1.55.0's jetstream package uses to turn buckets into streams
// (kv.go prepareKeyValueConfig, object.go prepareObjectStoreConfig). The bucket
// streams natsplan creates must equal what CreateKeyValue and CreateObjectStore
// create, so that clients binding to them find exactly what they expect.
const (
	kvStreamPrefix    = "KV_"
	objStreamPrefix   = "OBJ_"
	kvMaxHistory      = 64
	kvDefaultDupe     = 2 * time.Minute
	minLimitMarkerTTL = time.Second // the server's floor for subject_delete_marker_ttl
)

// validBucket is nats.go's validBucketRe: bucket names are stricter than stream names.
var validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// kvFieldPath maps a kv attribute name to the stream JSON path it becomes.
func kvFieldPath(name string) (string, bool) {
	switch name {
	case "history":
		return "max_msgs_per_subject", true
	case "ttl":
		return "max_age", true
	case "max_value_size":
		return "max_msg_size", true
	case "limit_marker_ttl":
		return "subject_delete_marker_ttl", true
	}
	return "", false
}

// objFieldPath maps an object_store attribute name to the stream JSON path it becomes.
func objFieldPath(name string) (string, bool) {
	if name == "ttl" {
		return "max_age", true
	}
	return "", false
}

// expandBuckets turns kv and object_store blocks into the streams that hold them:
// KV_<bucket> and OBJ_<bucket>, configured exactly as nats.go would create them.
// Load calls it after decoding.
func expandBuckets(m *model.Model) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range bucketSortedKeys(m.KVs) {
		kv := m.KVs[name]
		cfg, d := KVStreamConfig(kv)
		diags = append(diags, addBucketStream(m, d, &model.Stream{
			Name: cfg.Name, Kind: model.KindKV, Bucket: kv.Bucket, Config: cfg,
			Lifecycle: kv.Lifecycle, Decl: bucketStreamDecl(kv.Decl, kvFieldPath),
		})...)
	}
	for _, name := range bucketSortedKeys(m.ObjectStores) {
		o := m.ObjectStores[name]
		cfg, d := ObjectStoreStreamConfig(o)
		diags = append(diags, addBucketStream(m, d, &model.Stream{
			Name: cfg.Name, Kind: model.KindObjectStore, Bucket: o.Bucket, Config: cfg,
			Lifecycle: o.Lifecycle, Decl: bucketStreamDecl(o.Decl, objFieldPath),
		})...)
	}
	return diags
}

// addBucketStream adds s to the model unless building its config failed (diags has
// errors) or a stream block already uses its name. It returns diags plus any clash.
func addBucketStream(m *model.Model, diags hcl.Diagnostics, s *model.Stream) hcl.Diagnostics {
	if diags.HasErrors() {
		return diags
	}
	if prev, ok := m.Streams[s.Name]; ok {
		what := "stream \"" + s.Name + "\""
		if prev.Decl != nil && prev.Decl.Range.Filename != "" {
			what += " (declared at " + prev.Decl.String() + ")"
		}
		return append(diags, bucketDiag(s.Decl, "", "Bucket name clashes with a stream",
			fmt.Sprintf("%s %q is stored as stream %q, but %s already uses that name; rename the bucket or the stream.",
				s.Kind, s.Bucket, s.Name, what)))
	}
	if m.Streams == nil {
		m.Streams = map[string]*model.Stream{}
	}
	m.Streams[s.Name] = s
	return diags
}

// KVStreamConfig builds the stream config of a kv bucket as nats.go's
// prepareKeyValueConfig does (package emit uses it to check an import).
func KVStreamConfig(kv *model.KV) (server.StreamConfig, hcl.Diagnostics) {
	diags := append(checkBucketName(kv.Decl, "kv", kv.Bucket), checkBucketReplicas(kv.Decl, kv.Replicas)...)
	history := int64(1)
	switch {
	case kv.History > kvMaxHistory || kv.History < 0:
		diags = append(diags, bucketDiag(kv.Decl, "history", "Invalid history",
			fmt.Sprintf("history must be between 1 and %d (the KV limit), got %d.", kvMaxHistory, kv.History)))
	case kv.History > 0:
		history = int64(kv.History)
	}
	if kv.LimitMarkerTTL != 0 && kv.LimitMarkerTTL < minLimitMarkerTTL {
		diags = append(diags, bucketDiag(kv.Decl, "limit_marker_ttl", "Invalid limit_marker_ttl",
			fmt.Sprintf("limit_marker_ttl must be at least 1s (the server's minimum), got %s.", kv.LimitMarkerTTL)))
	}
	if kv.Mirror != nil && len(kv.Sources) > 0 {
		diags = append(diags, bucketDiag(kv.Decl, "mirror", "Mirror and sources together",
			"A kv bucket is either a mirror of one bucket or sources others; remove the mirror block or the source blocks."))
	}
	for i, src := range kv.Sources {
		if src.FilterSubject != "" && len(src.SubjectTransforms) == 0 {
			diags = append(diags, bucketDiag(kv.Decl, fmt.Sprintf("sources[%d].filter_subject", i), "Filter on a kv source",
				"A kv source maps the source bucket's keys with a subject transform, which the server does not combine with filter_subject; "+
					"write a subject_transform block instead (src = the source keys to copy, dest = the same keys under $KV.<this bucket>.)."))
		}
	}
	storage, d := bucketStorage(kv.Decl, kv.Storage)
	diags = append(diags, d...)
	compression, d := bucketCompression(kv.Decl, kv.Compression)
	diags = append(diags, d...)
	if diags.HasErrors() {
		return server.StreamConfig{}, diags
	}

	dupe := kvDefaultDupe
	if kv.TTL > 0 && kv.TTL < dupe {
		dupe = kv.TTL
	}
	cfg := server.StreamConfig{
		Name:         kvStreamPrefix + kv.Bucket,
		Description:  kv.Description,
		MaxMsgsPer:   history,
		MaxBytes:     bucketOrUnlimited(kv.MaxBytes),
		MaxAge:       kv.TTL,
		MaxMsgSize:   int32(bucketOrUnlimited(int64(kv.MaxValueSize))),
		Storage:      storage,
		Replicas:     max(kv.Replicas, 1),
		Placement:    bucketClonePlacement(kv.Placement),
		AllowRollup:  true,
		DenyDelete:   true,
		Duplicates:   dupe,
		MaxMsgs:      -1,
		MaxConsumers: -1,
		AllowDirect:  true,
		RePublish:    bucketCloneRePublish(kv.RePublish),
		Compression:  compression,
		Discard:      server.DiscardNew,
		Metadata:     bucketCloneMetadata(kv.Metadata),
	}
	if kv.LimitMarkerTTL != 0 {
		cfg.AllowMsgTTL = true
		cfg.SubjectDeleteMarkerTTL = kv.LimitMarkerTTL
	}
	subjects := []string{kvSubjects(kv.Bucket)}
	switch {
	case kv.Mirror != nil:
		mirror := bucketCloneSource(kv.Mirror)
		if !strings.HasPrefix(mirror.Name, kvStreamPrefix) {
			mirror.Name = kvStreamPrefix + mirror.Name
		}
		cfg.Mirror = mirror
		cfg.MirrorDirect = true
		subjects = nil // a mirror has no subjects of its own
	case len(kv.Sources) > 0:
		for _, src := range kv.Sources {
			cfg.Sources = append(cfg.Sources, kvSource(src, kv.Bucket))
		}
	}
	cfg.Subjects = subjects
	return cfg, nil
}

// kvSource names a source bucket's stream and maps its keys into this bucket, as
// nats.go does. A source that sets its own subject transforms is taken as written:
// it names the full stream, which need not be a bucket.
func kvSource(src *server.StreamSource, bucket string) *server.StreamSource {
	s := bucketCloneSource(src)
	if len(s.SubjectTransforms) > 0 {
		return s
	}
	srcBucket := strings.TrimPrefix(s.Name, kvStreamPrefix)
	s.Name = kvStreamPrefix + srcBucket
	if s.External == nil || srcBucket != bucket {
		s.SubjectTransforms = []server.SubjectTransformConfig{{Source: kvSubjects(srcBucket), Destination: kvSubjects(bucket)}}
	}
	return s
}

func kvSubjects(bucket string) string { return "$KV." + bucket + ".>" }

// ObjectStoreStreamConfig builds the stream config of an object store as nats.go's
// prepareObjectStoreConfig does.
func ObjectStoreStreamConfig(o *model.ObjectStore) (server.StreamConfig, hcl.Diagnostics) {
	diags := append(checkBucketName(o.Decl, "object_store", o.Bucket), checkBucketReplicas(o.Decl, o.Replicas)...)
	storage, d := bucketStorage(o.Decl, o.Storage)
	diags = append(diags, d...)
	compression, d := bucketCompression(o.Decl, o.Compression)
	diags = append(diags, d...)
	if diags.HasErrors() {
		return server.StreamConfig{}, diags
	}
	return server.StreamConfig{
		Name:        objStreamPrefix + o.Bucket,
		Description: o.Description,
		Subjects:    []string{"$O." + o.Bucket + ".C.>", "$O." + o.Bucket + ".M.>"},
		MaxAge:      o.TTL,
		MaxBytes:    bucketOrUnlimited(o.MaxBytes),
		Storage:     storage,
		Replicas:    max(o.Replicas, 1),
		Placement:   bucketClonePlacement(o.Placement),
		Discard:     server.DiscardNew,
		AllowRollup: true,
		AllowDirect: true,
		Metadata:    bucketCloneMetadata(o.Metadata),
		Compression: compression,
	}, nil
}

// checkBucketReplicas refuses negative replicas, which the bucket's stream would
// otherwise silently turn into 1.
func checkBucketReplicas(d *model.Decl, n int) hcl.Diagnostics {
	if n >= 0 {
		return nil
	}
	return hcl.Diagnostics{bucketDiag(d, "num_replicas", "Invalid num_replicas",
		fmt.Sprintf("num_replicas must be 1 or more (0 or unset means 1), got %d.", n))}
}

func checkBucketName(d *model.Decl, kind, name string) hcl.Diagnostics {
	if validBucket.MatchString(name) {
		return nil
	}
	return hcl.Diagnostics{bucketDiag(d, "", "Invalid bucket name",
		fmt.Sprintf("%s name %q may only contain letters, digits, '_' and '-' (the rule of the NATS clients); rename it.", kind, name))}
}

// bucketStorage maps the storage attribute; nats.go's zero value is file.
func bucketStorage(d *model.Decl, s string) (server.StorageType, hcl.Diagnostics) {
	switch strings.ToLower(s) {
	case "", "file":
		return server.FileStorage, nil
	case "memory":
		return server.MemoryStorage, nil
	}
	return 0, hcl.Diagnostics{bucketDiag(d, "storage", "Invalid storage",
		fmt.Sprintf("storage must be \"file\" or \"memory\", got %q.", s))}
}

func bucketCompression(d *model.Decl, s string) (server.StoreCompression, hcl.Diagnostics) {
	switch strings.ToLower(s) {
	case "", "none":
		return server.NoCompression, nil
	case "s2":
		return server.S2Compression, nil
	}
	return 0, hcl.Diagnostics{bucketDiag(d, "compression", "Invalid compression",
		fmt.Sprintf("compression must be \"none\" or \"s2\", got %q.", s))}
}

// bucketDiag is an error at the attribute path of a bucket block (its block when
// path is "" or was not set).
func bucketDiag(d *model.Decl, path, summary, detail string) *hcl.Diagnostic {
	diag := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
	if d != nil {
		r := d.FieldRange(path)
		diag.Subject = &r
	}
	return diag
}

// bucketStreamDecl re-keys a bucket declaration by stream JSON paths, keeping the bucket's
// own names too, so findings about max_age point at the ttl attribute.
func bucketStreamDecl(d *model.Decl, streamPath func(string) (string, bool)) *model.Decl {
	if d == nil {
		return nil
	}
	out := &model.Decl{Range: d.Range, Fields: make(map[string]hcl.Range, len(d.Fields))}
	for path, r := range d.Fields {
		out.Fields[path] = r
	}
	for path, r := range d.Fields {
		head, rest, _ := strings.Cut(path, ".")
		if to, ok := streamPath(head); ok {
			if rest != "" {
				to += "." + rest
			}
			out.Fields[to] = r
		}
	}
	return out
}

func bucketOrUnlimited(v int64) int64 {
	if v == 0 {
		return -1
	}
	return v
}

func bucketSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func bucketCloneMetadata(md map[string]string) map[string]string {
	if md == nil {
		return nil
	}
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[k] = v
	}
	return out
}

func bucketClonePlacement(p *server.Placement) *server.Placement {
	if p == nil {
		return nil
	}
	c := *p
	c.Tags = append([]string(nil), p.Tags...)
	return &c
}

func bucketCloneRePublish(r *server.RePublish) *server.RePublish {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

func bucketCloneSource(s *server.StreamSource) *server.StreamSource {
	c := server.StreamSource{
		Name: s.Name, OptStartSeq: s.OptStartSeq, FilterSubject: s.FilterSubject,
		SubjectTransforms: append([]server.SubjectTransformConfig(nil), s.SubjectTransforms...),
	}
	if s.OptStartTime != nil {
		t := *s.OptStartTime
		c.OptStartTime = &t
	}
	if s.External != nil {
		e := *s.External
		c.External = &e
	}
	if s.Consumer != nil {
		cs := *s.Consumer
		c.Consumer = &cs
	}
	return &c
}
