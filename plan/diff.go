package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// Hash returns "sha256:<hex>" of v's canonical JSON: object keys sorted, server-owned
// metadata (_nats.*) stripped from every "metadata" object, an empty metadata dropped.
func Hash(v any) string {
	b, err := canonicalBytes(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonicalBytes is the canonical JSON Hash hashes: byte-wise where canonicalJSON can,
// else through the generic form.
func canonicalBytes(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if out, err := canonicalJSON(b); err == nil {
		return out, nil
	}
	return genericCanonical(b)
}

// genericCanonical decodes a JSON document, strips server metadata and re-encodes it,
// which sorts the keys.
func genericCanonical(b []byte) ([]byte, error) {
	doc, err := decodeGeneric(b)
	if err != nil {
		return nil, err
	}
	stripServerMeta(doc)
	return json.Marshal(doc)
}

// stripServerMeta removes _nats.* keys from every "metadata" object inside v.
func stripServerMeta(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if m, ok := e.(map[string]any); ok && k == "metadata" {
				for mk := range m {
					if strings.HasPrefix(mk, model.ServerMetaPrefix) {
						delete(m, mk)
					}
				}
				if len(m) == 0 {
					delete(x, k)
				}
				continue
			}
			stripServerMeta(e)
		}
	case []any:
		for _, e := range x {
			stripServerMeta(e)
		}
	}
}

// toJSONValue turns v into its generic JSON form, keeping numbers exact.
func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeGeneric(b)
}

// decodeGeneric decodes a JSON document into its generic form, keeping numbers exact.
func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// canonStream is the form streams are compared in: what the server ignores is gone.
// c is the caller's copy, sharing its slices, maps and pointers: each one changed here
// is replaced by a changed copy, never changed in place. Its JSON form is what is
// compared, so no deeper copy is needed.
func canonStream(c server.StreamConfig) map[string]any {
	c.Metadata = userMetadata(c.Metadata)
	c.Subjects = sortedCopy(c.Subjects)
	if c.Placement != nil {
		p := *c.Placement
		p.Tags = sortedCopy(p.Tags)
		c.Placement = &p
	}
	if c.Mirror != nil {
		// The server overwrites it with the origin's allow_direct, and forgets a
		// mirror's duplicate_window when it restarts.
		c.MirrorDirect, c.Duplicates = false, 0
		m := *c.Mirror
		m.OptStartTime = utcCopy(m.OptStartTime)
		c.Mirror = &m
	}
	if len(c.Sources) > 0 {
		sources := make([]*server.StreamSource, len(c.Sources))
		for i, s := range c.Sources {
			if s != nil {
				cp := *s
				cp.OptStartTime = utcCopy(cp.OptStartTime)
				sources[i] = &cp
			}
		}
		c.Sources = sources
	}
	return mapOf(c)
}

// canonConsumer is the form consumers are compared in. pause_until is compared apart
// because it is changed through the PAUSE API. Like canonStream, it changes only
// copies of what c shares with the caller.
func canonConsumer(c server.ConsumerConfig, streamReplicas int) map[string]any {
	c.Metadata = userMetadata(c.Metadata)
	c.FilterSubjects = sortedCopy(c.FilterSubjects)
	if c.Replicas == 0 {
		c.Replicas = streamReplicas
	}
	c.PauseUntil = nil
	c.OptStartTime = utcCopy(c.OptStartTime)
	return mapOf(c)
}

func mapOf(v any) map[string]any {
	doc, err := toJSONValue(v)
	if err != nil {
		return nil
	}
	m, _ := doc.(map[string]any)
	return m
}

// diffMaps compares two JSON objects key by key, descending into nested objects, and
// returns one FieldChange per differing leaf with its dotted path. Rules are set later.
func diffMaps(prefix string, before, after map[string]any) []*FieldChange {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []*FieldChange
	for _, k := range names {
		b, a := before[k], after[k]
		path := prefix + k
		bm, bok := b.(map[string]any)
		am, aok := a.(map[string]any)
		if bok && aok {
			out = append(out, diffMaps(path+".", bm, am)...)
			continue
		}
		if !reflect.DeepEqual(a, b) {
			out = append(out, &FieldChange{Path: path, Before: b, After: a})
		}
	}
	return out
}

// rawJSON marshals a config for Change.Before/After, leaving subjects' ">" readable.
func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// jsonCompact renders v as compact JSON.
func jsonCompact(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
