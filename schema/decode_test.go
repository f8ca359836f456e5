package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/zclconf/go-cty/cty"
)

// TestFromJSONAsJSON decodes every block of the example files with fromJSON and with
// JSON alone and wants the same values and errors: fromJSON sets some fields without
// JSON, and must set them as JSON does.
func TestFromJSONAsJSON(t *testing.T) {
	t.Parallel()
	kinds := map[string]struct {
		spec *objectSpec
		typ  reflect.Type
	}{
		"natsplan":        {natsplanSpec(), reflect.TypeFor[natsplanJSON]()},
		"stream":          {streamSpec().with(lifecycleSpec(false)), reflect.TypeFor[server.StreamConfig]()},
		"consumer":        {consumerSpec().with(lifecycleSpec(true), deadLetterSpec()), reflect.TypeFor[server.ConsumerConfig]()},
		"kv":              {kvSpec(), reflect.TypeFor[bucketJSON]()},
		"object_store":    {objectStoreSpec(), reflect.TypeFor[bucketJSON]()},
		"subject_mapping": {mappingSpec(), reflect.TypeFor[mappingJSON]()},
		"consumer_group":  {groupSpec(), reflect.TypeFor[groupJSON]()},
	}
	ctx := &hcl.EvalContext{Functions: functions(), Variables: map[string]cty.Value{
		"var": cty.ObjectVal(map[string]cty.Value{"replicas": cty.NumberIntVal(3)})}}
	decoded := 0
	for _, name := range []string{"testdata/all_fields.hcl", "testdata/design.hcl"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inline := inlineBodies{}
		f, diags := parseConfig(src, name, inline, true)
		if diags.HasErrors() {
			t.Fatalf("parse %s: %s", name, diags)
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			k, ok := kinds[b.Type]
			if !ok {
				continue
			}
			d := newDecoder(ctx, inline)
			out := d.object(d.blockItems(b), k.spec, "", b.DefRange())
			if d.hasErrors() {
				t.Fatalf("%s %v: %s", b.Type, b.Labels, d.diags)
			}
			// As decoded, with nested objects and natsplan's own blocks, which the
			// server's types refuse (unknown fields); then each nested object alone.
			cases := []map[string]any{out}
			for k, v := range out {
				if nested, ok := v.(map[string]any); ok {
					cases = append(cases, nested)
					without := maps.Clone(out)
					delete(without, k)
					cases = append(cases, without)
				}
			}
			for _, m := range cases {
				for _, typ := range []reflect.Type{k.typ, reflect.TypeFor[lifecycleJSON](), reflect.TypeFor[deadLetterJSON](), reflect.TypeFor[server.Placement](),
					reflect.TypeFor[server.StreamSource](), reflect.TypeFor[server.RePublish](), reflect.TypeFor[server.StreamConsumerLimits](), reflect.TypeFor[workersJSON]()} {
					sameAsJSON(t, fmt.Sprintf("%s %v into %s", b.Type, b.Labels, typ), m, reflect.New(typ).Interface(), reflect.New(typ).Interface())
					decoded++
				}
			}
		}
	}
	if decoded < 100 {
		t.Fatalf("%d decodes compared", decoded)
	}
}

// sameAsJSON decodes m with fromJSON into direct and with JSON alone into viaJSON,
// pointers to equal values, and reports where the values or the errors differ.
func sameAsJSON(t *testing.T, what string, m map[string]any, direct, viaJSON any) {
	t.Helper()
	errDirect, errJSON := fromJSON(maps.Clone(m), direct), fromJSONOnly(maps.Clone(m), viaJSON)
	if (errDirect == nil) != (errJSON == nil) || errDirect != nil && errDirect.Error() != errJSON.Error() {
		t.Errorf("%s: error %v, JSON's %v", what, errDirect, errJSON)
	}
	if !reflect.DeepEqual(direct, viaJSON) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, direct, viaJSON)
	}
}

// TestAssignDirect checks the values fromJSON leaves to JSON: out of range, of
// another kind, or not valid UTF-8 (which JSON replaces).
func TestAssignDirect(t *testing.T) {
	t.Parallel()
	type dst struct {
		I32    int32             `json:"i32"`
		U      uint64            `json:"u"`
		S      string            `json:"s"`
		N      json.Number       `json:"n"`
		F      float64           `json:"f"`
		Ack    server.AckPolicy  `json:"ack"`
		L      []string          `json:"l"`
		M      map[string]string `json:"m"`
		Quoted int               `json:"q,string"`
	}
	for _, m := range []map[string]any{
		{"i32": int64(1 << 40)},
		{"i32": int64(-5), "u": int64(7), "s": "x", "l": []any{"a"}, "m": map[string]string{"k": "v"}, "ack": "all"},
		{"u": int64(-1)},
		{"u": uint64(1 << 63)},
		{"i32": uint64(1 << 63)},
		{"s": "bad \xff utf-8"},
		{"l": []any{"ok", "\xfe"}},
		{"l": []any{}},
		{"m": map[string]string{}},
		{"m": map[string]string{"\xff": "v"}},
		{"n": "12"},
		{"n": "twelve"},
		{"f": int64(3)},
		{"ack": "sometimes", "s": "set"},
		{"ack": true},
		{"q": "5"},
		{"q": int64(5)},
		{"unknown": "x", "s": "set"},
		{"s": int64(1), "i32": int64(2)},
	} {
		sameAsJSON(t, fmt.Sprint(m), m, &dst{}, &dst{})
	}
}

// TestQuoteJSON wants json.Marshal's bytes for every string.
func TestQuoteJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "explicit", "a b~", `q"uote`, `back\slash`, "<html>", "a&b", "tab\t", "nul\x00", "del\x7f", "é", "\u2028", "bad\xff"} {
		got, err := quoteJSON(s)
		want, wantErr := json.Marshal(s)
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("quoteJSON(%q) = %s, %v; json.Marshal: %s, %v", s, got, err, want, wantErr)
		}
	}
}

// TestQuotedValue wants the value Value gives for every quoted string quotedValue
// answers, and no answer for templates.
func TestQuotedValue(t *testing.T) {
	t.Parallel()
	ctx := exprContext()
	eachExpr(t, map[string]bool{`"1h"`: true, `""`: true, `"e\u0301"`: true, `"a\nb"`: true, `"$${x}"`: true,
		`"${var.x}"`: false, `"a${var.x}"`: false, `"${"a"}"`: false, `1`: false, `true`: false, `var.x`: false, `<<EOT
heredoc
EOT
`: true}, func(expr hcl.Expression) bool {
		got, ok := quotedValue(expr)
		if !ok {
			return false
		}
		want, diags := expr.Value(ctx)
		if diags.HasErrors() || !got.RawEquals(want) {
			t.Errorf("%#v, Value gives %#v", got, want)
		}
		return true
	})
}

// exprContext is an evaluation context with var.x = "y".
func exprContext() *hcl.EvalContext {
	return &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{"x": cty.StringVal("y")})}}
}

// eachExpr parses each source of cases and wants check, which compares what it
// answers with the long way, to answer as the case says.
func eachExpr(t *testing.T, cases map[string]bool, check func(hcl.Expression) bool) {
	t.Helper()
	for src, answers := range cases {
		expr, diags := hclsyntax.ParseExpression([]byte(src), "t.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", src, diags)
		}
		if got := check(expr); got != answers {
			t.Errorf("%s: answered %v, want %v", src, got, answers)
		}
	}
}

// TestGoDuration wants parseDurationTokens's duration for every string goDuration
// answers, and an answer for the usual ones.
func TestGoDuration(t *testing.T) {
	t.Parallel()
	for in, answers := range map[string]bool{"1h": true, "30s": true, "250ms": true, "5m": true, "7ns": true, "3us": true, "3µs": true, "3μs": true,
		"0s": true, "007s": true, "9223372036854775807ns": true, "922337203685477580ns": true, "999999999999999999h": false, "2562047h": true, "2562048h": false,
		"0": true, "1h30m": true, "1.5h": true, "1h30.5m": true, ".5s": true, "+1h": true,
		"1d": false, "1d12h": false, " 1h": false, "1h ": false, "-1h": false, "-0s": false, "h": false, "": false, "1": false, "1x": false} {
		got, ok := goDuration(in)
		if ok != answers {
			t.Errorf("goDuration(%q) answers %v, want %v", in, ok, answers)
		}
		want, err := parseDurationTokens(in)
		if ok && (err != nil || got != want) {
			t.Errorf("goDuration(%q) = %v; parseDurationTokens: %v, %v", in, got, want, err)
		}
	}
}

// TestFromJSONNotZero decodes into configs that are already set: fromJSON then puts
// back a copy, not the zero value, when it falls back to JSON, as JSON alone leaves them.
func TestFromJSONNotZero(t *testing.T) {
	t.Parallel()
	for _, m := range []map[string]any{
		{"ack_policy": "explicit", "max_ack_pending": int64(5)},
		{"ack_policy": "sometimes", "max_ack_pending": int64(5)},
		{"unknown": true, "description": "d"},
		{"metadata": map[string]string{"b": "2"}, "filter_subjects": []any{"x"}},
	} {
		set := server.ConsumerConfig{Durable: "d", MaxDeliver: 3, Metadata: map[string]string{"a": "1"}, FilterSubjects: []string{"y", "z"}}
		direct, viaJSON := set, set
		direct.Metadata, viaJSON.Metadata = maps.Clone(set.Metadata), maps.Clone(set.Metadata)
		direct.FilterSubjects, viaJSON.FilterSubjects = slices.Clone(set.FilterSubjects), slices.Clone(set.FilterSubjects)
		sameAsJSON(t, fmt.Sprint(m), m, &direct, &viaJSON)
	}
}

// TestQuotedList wants the value eval and list give for every list quotedList
// answers.
func TestQuotedList(t *testing.T) {
	t.Parallel()
	ctx := exprContext()
	f := strs("subjects")
	eachExpr(t, map[string]bool{`[]`: true, `["a.>"]`: true, `["a.>", "b.*", "e\u0301"]`: true, `["a",]`: true,
		`["a", var.x]`: false, `["${var.x}"]`: false, `["a", 1]`: false, `["a", null]`: false, `var.x`: false, `"a"`: false, `[for s in ["a"] : s]`: false,
	}, func(expr hcl.Expression) bool {
		got, ok := quotedList(expr)
		if !ok {
			return false
		}
		d := newDecoder(ctx, inlineBodies{})
		v, ok := d.eval(expr)
		if !ok {
			t.Fatalf("%s", d.diags)
		}
		want, ok := d.list(v, &f, nil, expr.Range())
		if !ok || d.hasErrors() || !reflect.DeepEqual(got, want) {
			t.Errorf("%#v, list gives %#v (%s)", got, want, d.diags)
		}
		return true
	})
}
