package schema

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

// CheckConsumerStreams reports consumers and consumer groups whose stream is neither
// declared in m nor in live. live is the set of stream names on the server; pass nil
// when there is no server (validate): the problems are then warnings, because the
// stream may exist on the target. Against a server (plan, apply) they are errors.
func CheckConsumerStreams(m *model.Model, live map[string]bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	sev, where := hcl.DiagWarning, "validate cannot tell whether it exists on the server"
	if live != nil {
		sev, where = hcl.DiagError, "it does not exist on the server either"
	}
	report := func(address, stream string, decl *model.Decl, r hcl.Range) {
		if _, ok := m.Streams[stream]; ok || live[stream] {
			return
		}
		diags = append(diags, &hcl.Diagnostic{Severity: sev, Summary: "Stream not declared",
			Detail:  fmt.Sprintf("%s reads stream %q, which is not declared in the configuration and %s; declare stream %q or create it on the server first.", address, stream, where, stream),
			Subject: rangePtr(r, decl)})
	}
	for _, k := range m.ConsumerKeys() {
		c := m.Consumers[k]
		if c.Group != "" {
			continue // reported once, on its group
		}
		r := hcl.Range{}
		if c.Decl != nil {
			r = c.Decl.Range
		}
		report(c.Address(), c.Stream, c.Decl, r)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Groups)) {
		g := m.Groups[name]
		report(g.Address(), g.Stream, g.Decl, g.Decl.FieldRange("stream"))
	}
	return diags
}

// rangePtr returns r, or nil when neither r nor decl carries a position.
func rangePtr(r hcl.Range, decl *model.Decl) *hcl.Range {
	if decl == nil || r.Filename == "" {
		return nil
	}
	return &r
}
