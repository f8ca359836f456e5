package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/schema"
)

// What the peers' corpus checks on the server: declared values held, the peer's
// assertions, objects gone.

// checkGone checks that the object at addr (stream.NAME, consumer.STREAM.NAME) is gone.
func checkGone(t *testing.T, api *jsapi.Client, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	parts := strings.Split(addr, ".")
	var found bool
	var err error
	switch {
	case parts[0] == "stream" && len(parts) == 2:
		var info *server.StreamInfo
		info, err = api.StreamInfo(ctx, parts[1])
		found = info != nil
	case parts[0] == "consumer" && len(parts) == 3:
		var info *server.ConsumerInfo
		info, err = api.ConsumerInfo(ctx, parts[1], parts[2])
		found = info != nil
	default:
		t.Fatalf("gone: bad address %q", addr)
	}
	if err != nil || found {
		t.Errorf("gone: %s is still on the server (%v)", addr, err)
	}
}

// checkDeclaredHeld loads the step's files as natsplan does and proves the server holds
// every attribute they set, with the value set: normalisation may fill in what a file
// leaves out, never change what it says.
func checkDeclaredHeld(t *testing.T, step, dir string, api *jsapi.Client, rewritten map[string]bool) {
	t.Helper()
	desired, diags := schema.Load([]string{dir}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("%s: load: %v", step, diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range sortedStreams(desired) {
		info, err := api.StreamInfo(ctx, s.Name)
		if err != nil || info == nil {
			t.Fatalf("%s: %s: not on the server (%v)", step, s.Address(), err)
		}
		cfg := s.Config
		if _, ok := s.Decl.Fields["storage"]; !ok {
			cfg.Storage = info.Config.Storage // the zero StorageType does not marshal
		}
		compareDeclared(t, step, "stream."+s.Name, s.Decl, cfg, info.Config, rewritten)
	}
	for _, c := range sortedConsumers(desired) {
		info, err := api.ConsumerInfo(ctx, c.Stream, c.Name)
		if err != nil || info == nil {
			t.Fatalf("%s: %s: not on the server (%v)", step, c.Address(), err)
		}
		compareDeclared(t, step, c.Address(), c.Decl, c.Config, *info.Config, rewritten)
	}
}

func sortedStreams(m *model.Model) []*model.Stream {
	var out []*model.Stream
	for _, s := range m.Streams {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedConsumers(m *model.Model) []*model.Consumer {
	var out []*model.Consumer
	for _, c := range m.Consumers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address() < out[j].Address() })
	return out
}

// compareDeclared compares, at every declared leaf path, the declared value with the
// live one (objects and maps by the keys declared).
func compareDeclared(t *testing.T, step, addr string, decl *model.Decl, desired, live any, rewritten map[string]bool) {
	t.Helper()
	if decl == nil {
		t.Fatalf("%s: %s has no declaration", step, addr)
	}
	for _, m := range declaredMismatches(addr, decl, toJSONDoc(t, desired), toJSONDoc(t, live), rewritten) {
		t.Errorf("%s: %s", step, m)
	}
}

// declaredMismatches lists the declared paths whose live value differs. A declared path
// absent from the desired JSON is a zero value the wire omits (deny_delete = false,
// opt_start_seq = 0) or a field natsplan keeps to itself (lifecycle): live must be zero
// or absent there too.
func declaredMismatches(addr string, decl *model.Decl, desired, live any, rewritten map[string]bool) []string {
	var paths []string
	for p := range decl.Fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		if isPathPrefix(p, paths) || rewritten[addr+" "+p] {
			continue // a container, whose declared leaves are compared; or a known rewrite
		}
		want, _ := jsonAt(desired, p)
		got, _ := jsonAt(live, p)
		if !jsonSubset(want, got) {
			out = append(out, fmt.Sprintf("%s %s: the file declares %s, the server holds %s", addr, p, jsonString(want), jsonString(got)))
		}
	}
	return out
}

func isPathPrefix(p string, paths []string) bool {
	for _, q := range paths {
		if len(q) > len(p) && strings.HasPrefix(q, p) && (q[len(p)] == '.' || q[len(p)] == '[') {
			return true
		}
	}
	return false
}

func toJSONDoc(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var pathPart = regexp.MustCompile(`^([^.\[]+)((?:\[\d+\])*)$`)

// jsonAt walks a path of keys and [index]es.
func jsonAt(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		m := pathPart.FindStringSubmatch(part)
		if m == nil {
			return nil, false
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[m[1]]; !ok {
			return nil, false
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(idx)
			arr, ok := cur.([]any)
			if !ok || n >= len(arr) {
				return nil, false
			}
			cur = arr[n]
		}
	}
	return cur, true
}

// jsonSubset: every key of an object in want is in got with a matching value; arrays
// match element by element; an empty want matches an absent got.
func jsonSubset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for k, v := range w {
			if !jsonSubset(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, _ := got.([]any)
		if len(w) != len(g) {
			return false
		}
		for i := range w {
			if !jsonSubset(w[i], g[i]) {
				return false
			}
		}
		return true
	case nil:
		return got == nil || isEmptyJSON(got)
	}
	if isEmptyJSON(want) && got == nil {
		return true
	}
	return reflect.DeepEqual(normNumber(want), normNumber(got))
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x.String() == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func normNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return v
}

func jsonString(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkPeerAssert checks one value the peer's test asserts.
func checkPeerAssert(t *testing.T, api *jsapi.Client, a peerAssert) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var live any
	parts := strings.Split(a.addr, ".")
	switch {
	case parts[0] == "stream" && len(parts) == 2:
		info, err := api.StreamInfo(ctx, parts[1])
		if err != nil || info == nil {
			t.Errorf("assert %s: no stream (%v)", a.line, err)
			return
		}
		live = info.Config
	case parts[0] == "consumer" && len(parts) == 3:
		info, err := api.ConsumerInfo(ctx, parts[1], parts[2])
		if err != nil || info == nil {
			t.Errorf("assert %s: no consumer (%v)", a.line, err)
			return
		}
		live = info.Config
	default:
		t.Errorf("assert %s: bad address", a.line)
		return
	}
	got, _ := jsonAt(toJSONDoc(t, live), a.path)
	want := assertWant(t, a)
	if !jsonSubset(want, got) || (want != nil && !isEmptyJSON(want) && got == nil) {
		t.Errorf("peer assertion %s: the server holds %s", a.line, jsonString(got))
	}
}

// assertWant converts durations written as "10s" into the wire's nanoseconds.
func assertWant(t *testing.T, a peerAssert) any {
	t.Helper()
	field := a.path[strings.LastIndex(a.path, ".")+1:]
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	conv := func(v any) any {
		if n, ok := v.(float64); ok {
			return json.Number(strconv.FormatFloat(n, 'f', -1, 64))
		}
		s, ok := v.(string)
		if !ok || !model.IsDurationField(field) {
			return v
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("assert %s: %v", a.line, err)
		}
		return json.Number(strconv.FormatInt(int64(d), 10))
	}
	if arr, ok := a.want.([]any); ok {
		out := make([]any, len(arr))
		for i, v := range arr {
			out[i] = conv(v)
		}
		return out
	}
	return conv(a.want)
}

// TestDeclaredMismatches checks the comparison the corpus relies on: it must catch a
// changed value, a zero value the server replaced, and an extra list element, and accept
// server-filled keys beside the declared ones.
func TestDeclaredMismatches(t *testing.T) {
	decl := &model.Decl{Fields: map[string]hcl.Range{
		"ack_wait": {}, "deny_delete": {}, "metadata": {}, "filter_subjects": {}, "placement": {}, "placement.tags": {},
	}}
	desired := `{"ack_wait": 10000000000, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`
	cases := []struct {
		live string
		want int
	}{
		{`{"ack_wait": 10000000000, "metadata": {"a": "b", "natsplan.project": "p"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 0},
		{`{"ack_wait": 1000000000, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 1},
		{`{"ack_wait": 10000000000, "deny_delete": true, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 1},
		{`{"ack_wait": 10000000000, "metadata": {}, "filter_subjects": ["x", "y"], "placement": {"tags": []}}`, 3},
	}
	for i, c := range cases {
		var d, l any
		if err := json.Unmarshal([]byte(desired), &d); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(c.live))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		d = toJSONDoc(t, d)
		if got := declaredMismatches("consumer.S.C", decl, d, l, nil); len(got) != c.want {
			t.Errorf("case %d: %d mismatches, want %d: %q", i, len(got), c.want, got)
		}
	}
}
