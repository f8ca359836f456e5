package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// Minimisation asks the planner, not a table of defaults, which fields matter: a
// field is left out when the config without it normalises (plan.NormalizeStream /
// NormalizeConsumer, the functions plan diffs with) to the same config as the live
// one. So an import plans as no change by construction, and a server default that
// depends on other fields (duplicate_window capped by max_age) is left out too.

// ownMetadata strips the server's _nats.* keys and natsplan's own natsplan.* keys,
// which the language reserves because plan writes them (prevent_destroy becomes a
// lifecycle block; it reports whether it was set).
func ownMetadata(md map[string]string) (map[string]string, bool) {
	var out map[string]string
	prevent := false
	for k, v := range md {
		if k == model.MetaPreventDestroy {
			// Fail safe: only an exact "false" leaves the object unprotected (a "TRUE" is
			// an NP407 error in the plan until it is corrected).
			prevent = v != "false"
		}
		if strings.HasPrefix(k, model.ServerMetaPrefix) || strings.HasPrefix(k, model.MetaPrefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out, prevent
}

// minimalStream returns the JSON fields of a live stream config that the files must
// set, without its name.
func minimalStream(live server.StreamConfig, t *model.Target) (map[string]any, error) {
	if live.Mirror != nil {
		live.MirrorDirect = false // the server sets it from the origin
	}
	want := plan.Hash(plan.NormalizeStream(live, t))
	same := func(m map[string]any) bool {
		var c server.StreamConfig
		return fromMap(m, &c) == nil && plan.Hash(plan.NormalizeStream(c, t)) == want
	}
	return minimise(live, []string{"name"}, same)
}

// minimalConsumer returns the JSON fields of a live consumer config that the files
// must set, without its names.
func minimalConsumer(live server.ConsumerConfig, stream *server.StreamConfig, t *model.Target) (map[string]any, error) {
	live.PauseUntil = nil // plan compares pause_until only when the files set it
	if live.Name == "" {
		live.Name = live.Durable
	}
	want := plan.Hash(plan.NormalizeConsumer(live, stream, t))
	same := func(m map[string]any) bool {
		var c server.ConsumerConfig
		return fromMap(m, &c) == nil && plan.Hash(plan.NormalizeConsumer(c, stream, t)) == want
	}
	return minimise(live, []string{"durable_name", "name"}, same)
}

// minimise drops each top-level field of cfg's JSON whose absence keeps same true,
// and then the keep fields, which the block labels carry.
func minimise(cfg any, keep []string, same func(map[string]any) bool) (map[string]any, error) {
	m, err := toMap(cfg)
	if err != nil {
		return nil, err
	}
	if !same(m) {
		return nil, fmt.Errorf("the live config does not survive a JSON round trip")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if contains(keep, k) {
			continue
		}
		v := m[k]
		delete(m, k)
		if !same(m) {
			m[k] = v
		}
	}
	for _, k := range keep {
		delete(m, k)
	}
	return m, nil
}

// bucketFields returns the kv or object_store attributes that declare live, or
// false when the stream is not exactly what such a block declares (someone changed
// it with other tools); it is then imported as a plain stream.
func bucketFields(s *model.Stream, t *model.Target) (map[string]any, bool) {
	live := s.Config
	live.Metadata, _ = ownMetadata(live.Metadata)
	want := plan.Hash(plan.NormalizeStream(live, t))
	var cfg server.StreamConfig
	var diags hcl.Diagnostics
	fields := map[string]any{}
	set := func(name string, v any, isSet bool) {
		if isSet {
			fields[name] = v
		}
	}
	set("description", live.Description, live.Description != "")
	set("max_bytes", live.MaxBytes, live.MaxBytes != -1)
	set("storage", "memory", live.Storage == server.MemoryStorage)
	set("num_replicas", live.Replicas, live.Replicas != 1)
	set("placement", live.Placement, live.Placement != nil)
	set("compression", "s2", live.Compression == server.S2Compression)
	set("metadata", live.Metadata, len(live.Metadata) > 0)
	set("ttl", int64(live.MaxAge), live.MaxAge != 0)
	compression := ""
	if live.Compression == server.S2Compression {
		compression = "s2"
	}
	if s.Kind == model.KindObjectStore {
		o := &model.ObjectStore{Bucket: s.Bucket, Description: live.Description, TTL: live.MaxAge,
			MaxBytes: zeroIfUnlimited(live.MaxBytes), Storage: storageName(live.Storage), Replicas: live.Replicas,
			Placement: live.Placement, Compression: compression, Metadata: live.Metadata}
		cfg, diags = schema.ObjectStoreStreamConfig(o)
	} else {
		set("history", live.MaxMsgsPer, live.MaxMsgsPer != 1)
		set("max_value_size", live.MaxMsgSize, live.MaxMsgSize != -1)
		set("republish", live.RePublish, live.RePublish != nil)
		set("limit_marker_ttl", int64(live.SubjectDeleteMarkerTTL), live.SubjectDeleteMarkerTTL != 0)
		kv := &model.KV{Bucket: s.Bucket, Description: live.Description, MaxValueSize: int32(zeroIfUnlimited(int64(live.MaxMsgSize))),
			History: int(live.MaxMsgsPer), TTL: live.MaxAge, MaxBytes: zeroIfUnlimited(live.MaxBytes),
			Storage: storageName(live.Storage), Replicas: live.Replicas, Placement: live.Placement, RePublish: live.RePublish,
			Compression: compression, LimitMarkerTTL: live.SubjectDeleteMarkerTTL, Metadata: live.Metadata}
		if live.Mirror != nil {
			m := *live.Mirror
			m.Name = strings.TrimPrefix(m.Name, "KV_")
			kv.Mirror = &m
			fields["mirror"] = &m
		}
		for _, src := range live.Sources {
			kv.Sources = append(kv.Sources, kvSource(src, s.Bucket))
		}
		set("sources", kv.Sources, len(kv.Sources) > 0)
		cfg, diags = schema.KVStreamConfig(kv)
	}
	if diags.HasErrors() || plan.Hash(plan.NormalizeStream(cfg, t)) != want {
		return nil, false
	}
	out, err := toMap(fields)
	return out, err == nil
}

// kvSource is the source block that declares src: the bucket name alone when src
// carries exactly the key mapping a kv block adds.
func kvSource(src *server.StreamSource, bucket string) *server.StreamSource {
	s := *src
	from := strings.TrimPrefix(s.Name, "KV_")
	mapping := []server.SubjectTransformConfig{{Source: "$KV." + from + ".>", Destination: "$KV." + bucket + ".>"}}
	if strings.HasPrefix(s.Name, "KV_") && (len(s.SubjectTransforms) == 0 && s.External != nil && from == bucket ||
		len(s.SubjectTransforms) == 1 && s.SubjectTransforms[0] == mapping[0]) {
		s.Name, s.SubjectTransforms = from, nil
	}
	return &s
}

func storageName(st server.StorageType) string {
	if st == server.MemoryStorage {
		return "memory"
	}
	return "file"
}

func zeroIfUnlimited(v int64) int64 {
	if v == -1 {
		return 0
	}
	return v
}

// toMap is v's JSON as a generic map with exact numbers.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func fromMap(m map[string]any, out any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}
