package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/plan"
)

// TestPartialBanner: a partial plan (--only) says so first in text and markdown, and
// the JSON document carries the patterns and the count of changes left out; a whole
// plan has none of it.
func TestPartialBanner(t *testing.T) {
	whole := computeFixture(t, fixtureDesired(true), fixtureLive())
	p, err := plan.Compute(fixtureDesired(true), fixtureLive(), plan.Options{Version: "v0.0.0-test", Only: []string{"consumer.ORDERS.pa*"}})
	if err != nil {
		t.Fatal(err)
	}
	// The paused consumer needs the two parts of the ORDERS update: the adopt, the
	// create, the replace and the delete are left out.
	if len(p.Changes) != 3 || p.LeftOut != 4 {
		t.Fatalf("want 3 changes and 4 left out, got %d and %d", len(p.Changes), p.LeftOut)
	}
	const banner = "PARTIAL PLAN: --only consumer.ORDERS.pa* — 4 other changes are not shown and will not be applied"
	var text bytes.Buffer
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(text.String(), "\n"); first != banner {
		t.Errorf("text starts with %q, want %q", first, banner)
	}
	var md bytes.Buffer
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if want := "> [!WARNING]\n> **PARTIAL PLAN**: `--only consumer.ORDERS.pa*` — 4 other changes are not shown and will not be applied.\n\n### natsplan plan"; !strings.HasPrefix(md.String(), want) {
		t.Errorf("markdown starts with:\n%s\nwant:\n%s", md.String()[:min(len(md.String()), 300)], want)
	}
	var js bytes.Buffer
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Only    []string `json:"only"`
		LeftOut int      `json:"left_out"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Only) != 1 || doc.Only[0] != "consumer.ORDERS.pa*" || doc.LeftOut != 4 {
		t.Errorf("json only %v left_out %d", doc.Only, doc.LeftOut)
	}
	for _, render := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return Text(b, whole, TextOptions{}) },
		func(b *bytes.Buffer) error { return Markdown(b, whole) },
		func(b *bytes.Buffer) error { return JSON(b, whole) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); strings.Contains(s, "PARTIAL") || strings.Contains(s, `"only"`) || strings.Contains(s, "left_out") {
			t.Errorf("a whole plan renders as partial:\n%s", s[:min(len(s), 300)])
		}
	}
}

// TestPartialNoChanges: a partial plan without changes never says the server matches
// the configuration: it left changes out.
func TestPartialNoChanges(t *testing.T) {
	p := &plan.Plan{Only: []string{"stream.X"}, LeftOut: 3}
	var text, md bytes.Buffer
	if err := Text(&text, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); strings.Contains(s, "matches the configuration") ||
		!strings.Contains(s, "No changes in what --only selects; 3 other change(s) left out.") {
		t.Errorf("text:\n%s", s)
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); !strings.Contains(s, "### natsplan plan: no changes in what --only selects") {
		t.Errorf("markdown:\n%s", s)
	}
}
