package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/zclconf/go-cty/cty"

	"github.com/natsplan/natsplan/model"
)

// serviceJSON is the part of a service {} block that holds plain values; the
// reference lists are decoded as traversals, not values.
type serviceJSON struct {
	Publishes   []string `json:"publishes"`
	InboxPrefix string   `json:"inbox_prefix"`
}

// serviceRefs are the attributes of a service block that hold references, and the
// kinds of object each accepts.
var serviceRefs = map[string][]string{
	"consumes": {"consumer_group", "consumer"},
	"reads":    {"stream", "kv", "object_store"},
	"writes":   {"kv", "object_store"},
}

func serviceSpec() *objectSpec {
	return &objectSpec{name: "service", goType: reflect.TypeFor[serviceJSON](), fields: []field{
		strs("publishes"), str("inbox_prefix"), strs("consumes"), strs("reads"), strs("writes"),
	}}
}

// service decodes a service block. Its references are checked by checkServices once
// every object, lane and bucket is known.
func (st *loadState) service(b *hclsyntax.Block) {
	name, ok, d := st.named(b, "service")
	s := &model.Service{Name: name, Decl: &model.Decl{Range: b.DefRange(), Fields: d.fields}}
	var plain []item
	seen := map[string]hcl.Range{}
	for _, it := range d.blockItems(b) {
		kinds, isRef := serviceRefs[it.name]
		if !isRef || it.block != nil {
			plain = append(plain, it)
			continue
		}
		if first, dup := seen[it.name]; dup {
			d.errorf(it.nameRange, "Duplicate argument", "%q is already set in this service block at %s; set it once.", it.name, rangeString(first))
			continue
		}
		seen[it.name] = it.rng
		d.fields[it.name] = it.rng
		refs := d.references(it, kinds)
		switch it.name {
		case "consumes":
			s.Consumes = refs
		case "reads":
			s.Reads = refs
		case "writes":
			s.Writes = refs
		}
	}
	out := d.object(plain, serviceSpec(), "", b.DefRange())
	var sj serviceJSON
	st.decodeInto(d, out, &sj, b)
	s.Publishes = sj.Publishes
	for i, p := range s.Publishes {
		if !server.IsValidSubject(p) {
			d.errorf(d.fields["publishes"], "Invalid subject", "publishes[%d] %q is not a valid subject: use tokens separated by '.', with '*' for one token and a final '>' for the rest.", i, p)
		}
	}
	s.InboxPrefix = model.DefaultInboxPrefix(name)
	if r, set := d.fields["inbox_prefix"]; set {
		s.InboxPrefix = sj.InboxPrefix
		switch {
		case !server.IsValidLiteralSubject(sj.InboxPrefix) || strings.HasSuffix(sj.InboxPrefix, "."):
			d.errorf(r, "Invalid inbox_prefix", "%q is not a valid inbox prefix: use subject tokens without wildcards and without a trailing '.', like \"_INBOX_%s\".", sj.InboxPrefix, name)
		case server.SubjectsCollide(sj.InboxPrefix+".>", "_INBOX.>"):
			d.errorf(r, "Shared inbox_prefix", "%q is within _INBOX, every client's default reply prefix, so the service would share replies with every other client; use a prefix of its own, like \"_INBOX_%s\".", sj.InboxPrefix, name)
		}
	}
	st.diags = append(st.diags, d.diags...)
	if ok {
		st.m.Services[name] = s
	}
}

// references decodes a list of references (consumer_group.x, consumer.S.C, or the
// same written as a string) into addresses, recording each element's range.
func (d *decoder) references(it item, kinds []string) []string {
	tc, ok := it.expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		d.errorf(it.expr.Range(), "Incorrect attribute value type", "%s must be a list of references, like %s = [%s.NAME].", it.name, it.name, kinds[0])
		return nil
	}
	var refs []string
	for i, e := range tc.Exprs {
		d.fields[fmt.Sprintf("%s[%d]", it.name, i)] = e.Range()
		addr, ok := referenceAddress(e)
		if !ok {
			v, ok := d.eval(e)
			if !ok {
				continue // reported by eval
			}
			if v.Type() != cty.String {
				d.errorf(e.Range(), "Invalid reference", "%s[%d] must be a reference like %s.NAME.", it.name, i, kinds[0])
				continue
			}
			addr = v.AsString()
		}
		kind, _, _ := strings.Cut(addr, ".")
		if !slices.Contains(kinds, kind) {
			d.errorf(e.Range(), "Invalid reference", "%s takes references to %s; %q is not one.", it.name, strings.Join(kinds, ", "), addr)
			continue
		}
		refs = append(refs, addr)
	}
	return refs
}

// referenceAddress reads a traversal (consumer.ORDERS.audit, consumer.ORDERS["a-1"])
// as an address, without evaluating it.
func referenceAddress(e hcl.Expression) (string, bool) {
	trav, diags := hcl.AbsTraversalForExpr(e)
	if diags.HasErrors() {
		return "", false
	}
	parts := []string{trav.RootName()}
	for _, step := range trav[1:] {
		switch s := step.(type) {
		case hcl.TraverseAttr:
			parts = append(parts, s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() != cty.String || !s.Key.IsKnown() || s.Key.IsNull() {
				return "", false
			}
			parts = append(parts, s.Key.AsString())
		default:
			return "", false
		}
	}
	return strings.Join(parts, "."), true
}

// checkServices reports references to objects that are not declared, and inbox
// prefixes two services share. It runs after groups and buckets are expanded, so a
// lane or a generated dead-letter stream can be named.
func checkServices(m *model.Model) hcl.Diagnostics {
	var diags hcl.Diagnostics
	services := sortedByDecl(m.Services, func(s *model.Service) *model.Decl { return s.Decl })
	for _, s := range services {
		for _, attr := range []string{"consumes", "reads", "writes"} {
			for i, addr := range serviceList(s, attr) {
				if cands, ok := referenceTargets(m, addr); !ok {
					r := s.Decl.FieldRange(fmt.Sprintf("%s[%d]", attr, i))
					diags = append(diags, diagAt(r, "Reference to undeclared object",
						"service %q %s %s, which is not declared.%s Declare it, or correct the reference.", s.Name, attr, addr, didYouMean(addr, cands)))
				}
			}
		}
	}
	for i, a := range services {
		for _, b := range services[:i] {
			if server.SubjectsCollide(a.InboxPrefix+".>", b.InboxPrefix+".>") {
				diags = append(diags, diagAt(a.Decl.FieldRange("inbox_prefix"), "Shared inbox_prefix",
					"service %q replies on %s.>, which overlaps service %q's %s.>; each service needs replies no other can read: give one an inbox_prefix of its own.", a.Name, a.InboxPrefix, b.Name, b.InboxPrefix))
			}
		}
	}
	return diags
}

func serviceList(s *model.Service, attr string) []string {
	switch attr {
	case "consumes":
		return s.Consumes
	case "reads":
		return s.Reads
	}
	return s.Writes
}

// referenceTargets reports whether addr names a declared object, and otherwise the
// addresses of its kind, for the hint.
func referenceTargets(m *model.Model, addr string) ([]string, bool) {
	kind, rest, _ := strings.Cut(addr, ".")
	var cands []string
	switch kind {
	case "consumer_group":
		if _, ok := m.Groups[rest]; ok {
			return nil, true
		}
		for n := range m.Groups {
			cands = append(cands, "consumer_group."+n)
		}
	case "consumer":
		stream, name, _ := strings.Cut(rest, ".")
		if _, ok := m.Consumers[model.ConsumerKey{Stream: stream, Name: name}]; ok {
			return nil, true
		}
		for k := range m.Consumers {
			cands = append(cands, "consumer."+k.Stream+"."+k.Name)
		}
	case "stream":
		if s, ok := m.Streams[rest]; ok && s.Kind == model.KindStream {
			return nil, true
		}
		for n, s := range m.Streams {
			if s.Kind == model.KindStream {
				cands = append(cands, "stream."+n)
			}
		}
	case "kv":
		if _, ok := m.KVs[rest]; ok {
			return nil, true
		}
		for n := range m.KVs {
			cands = append(cands, "kv."+n)
		}
	case "object_store":
		if _, ok := m.ObjectStores[rest]; ok {
			return nil, true
		}
		for n := range m.ObjectStores {
			cands = append(cands, "object_store."+n)
		}
	}
	slices.Sort(cands)
	return cands, false
}
