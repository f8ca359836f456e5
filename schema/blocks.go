package schema

import (
	"fmt"
	"path"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// natsplanJSON is the natsplan {} block as decoded.
type natsplanJSON struct {
	Project string   `json:"project"`
	Ignore  []string `json:"ignore"`
	Expect  *struct {
		Server  string `json:"server"`
		Cluster string `json:"cluster"`
		Domain  string `json:"domain"`
		Account string `json:"account"`
	} `json:"expect"`
	Lock *struct {
		Bucket string        `json:"bucket"`
		TTL    time.Duration `json:"ttl"`
	} `json:"lock"`
	ServerLimits *struct {
		MaxRequestBatch int           `json:"max_request_batch"`
		MaxAckPending   int           `json:"max_ack_pending"`
		Duplicates      time.Duration `json:"duplicate_window"`
	} `json:"server_limits"`
}

func natsplanSpec() *objectSpec {
	return &objectSpec{name: "natsplan", goType: reflect.TypeFor[natsplanJSON](), fields: []field{
		str("project"), strs("ignore"),
		object("expect", &objectSpec{name: "expect", fields: []field{str("server"), str("cluster"), str("domain"), str("account")}}),
		object("lock", &objectSpec{name: "lock", fields: []field{str("bucket"), duration("ttl")}}),
		object("server_limits", &objectSpec{name: "server_limits", fields: []field{
			integer("max_request_batch"), integer("max_ack_pending"), duration("duplicate_window")}}),
	}}
}

// bucketName is nats.go's rule for KV bucket and object store names.
var bucketName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func (st *loadState) natsplan(b *hclsyntax.Block) {
	d := newDecoder(st.ctx, st.inline)
	items := d.blockItems(b)
	for _, it := range items {
		// A project that is written but wrong is reported where it is, not also as missing.
		st.projectWritten = st.projectWritten || it.name == "project"
	}
	out := d.object(items, natsplanSpec(), "", b.DefRange())
	var np natsplanJSON
	st.decodeInto(d, out, &np, b)
	st.diags = append(st.diags, d.diags...)
	if r, ok := d.fields["project"]; ok && !model.ValidProject(np.Project) {
		st.errorf(r, "Invalid project name",
			"%q is not a valid project name: use 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit.", np.Project)
	} else {
		st.m.Project = np.Project
	}
	for i, g := range np.Ignore {
		if _, err := path.Match(g, ""); err != nil {
			st.errorf(d.fields["ignore"], "Invalid ignore pattern", "ignore[%d] %q is not a valid glob: %s.", i, g, err)
		}
	}
	st.m.Ignore = np.Ignore
	if e := np.Expect; e != nil {
		st.m.Expect = &model.Expect{Server: e.Server, Cluster: e.Cluster, Domain: e.Domain, Account: e.Account, Decl: subDecl(d.fields, "expect")}
	}
	if l := np.Lock; l != nil {
		if r, ok := d.fields["lock.bucket"]; ok && !bucketName.MatchString(l.Bucket) {
			st.errorf(r, "Invalid lock bucket name", "%q is not a valid KV bucket name: use letters, digits, '_' and '-'.", l.Bucket)
		}
		st.m.Lock = &model.Lock{Bucket: l.Bucket, TTL: l.TTL, Decl: subDecl(d.fields, "lock")}
	}
	if l := np.ServerLimits; l != nil {
		st.serverLimits(d, &model.ServerLimits{MaxRequestBatch: l.MaxRequestBatch, MaxAckPending: l.MaxAckPending,
			Duplicates: l.Duplicates, Decl: subDecl(d.fields, "server_limits")})
	}
}

// minDuplicateWindow is the server's smallest duplicate window (checkStreamCfgLocked).
const minDuplicateWindow = 100 * time.Millisecond

// serverLimits checks the natsplan { server_limits {} } values, which must be what a
// server's jetstream { limits {} } can hold: a positive count, a window of at least the
// server's 100ms. A limit the server does not have is left out, not written as 0.
func (st *loadState) serverLimits(d *decoder, l *model.ServerLimits) {
	ok := true
	for _, f := range []struct {
		name string
		val  int
	}{{"max_request_batch", l.MaxRequestBatch}, {"max_ack_pending", l.MaxAckPending}} {
		if r, set := d.fields["server_limits."+f.name]; set && f.val <= 0 {
			st.errorf(r, "Invalid server limit", "%s = %d: the server's limit is a positive count; "+
				"leave %s out when the server's jetstream { limits {} } does not set it.", f.name, f.val, f.name)
			ok = false
		}
	}
	if r, set := d.fields["server_limits.duplicate_window"]; set && l.Duplicates < minDuplicateWindow {
		st.errorf(r, "Invalid server limit", "duplicate_window = %q: the server's limit is a duration of at least 100ms; "+
			"leave duplicate_window out when the server's jetstream { limits {} } does not set it.", l.Duplicates)
		ok = false
	}
	if ok {
		st.m.ServerLimits = l
	}
}

// object decodes one stream, consumer, subject_mapping, consumer_group, kv or object_store block.
func (st *loadState) object(b *hclsyntax.Block) {
	switch b.Type {
	case "stream":
		st.stream(b)
	case "consumer":
		st.consumer(b)
	case "subject_mapping":
		st.mapping(b)
	case "consumer_group":
		st.group(b)
	case "kv", "object_store":
		st.bucket(b)
	case "service":
		st.service(b)
	}
}

// decodeInto decodes the JSON of out into dst. The field table has already checked
// every value, so a failure here is a natsplan bug, still reported, never a panic.
func (st *loadState) decodeInto(d *decoder, out map[string]any, dst any, b *hclsyntax.Block) bool {
	if d.hasErrors() {
		// Keep what decoded: fields with errors are absent, so this cannot fail on them.
		_ = fromJSON(out, dst)
		return false
	}
	if err := fromJSON(out, dst); err != nil {
		d.errorf(b.DefRange(), "Invalid "+b.Type, "The %s block does not form a valid configuration: %s.", b.Type, err)
		return false
	}
	return true
}

// take removes key from out and decodes it into dst.
func take(out map[string]any, key string, dst any) {
	v, ok := out[key].(map[string]any)
	delete(out, key)
	if ok {
		_ = fromJSON(v, dst)
	}
}

// takeLifecycle removes the lifecycle block from out and returns it. Without one it
// returns the zero value at once: most blocks have none, and decoding into a
// lifecycleJSON puts it on the heap.
func takeLifecycle(out map[string]any) model.Lifecycle {
	if _, ok := out["lifecycle"]; !ok {
		return model.Lifecycle{}
	}
	var lc lifecycleJSON
	take(out, "lifecycle", &lc)
	return model.Lifecycle(lc)
}

// subDecl is the Decl of a nested block: its range and its fields relative to it.
func subDecl(fields map[string]hcl.Range, prefix string) *model.Decl {
	d := &model.Decl{Range: fields[prefix], Fields: map[string]hcl.Range{}}
	for k, r := range fields {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
			d.Fields[rest] = r
		}
	}
	return d
}

// checkName applies the server's isValidAssetName rule and length limit.
func (st *loadState) checkName(what, name string, r hcl.Range) bool {
	var problem string
	switch {
	case name == "":
		problem = "it is empty"
	case len(name) > server.JSMaxNameLen:
		problem = fmt.Sprintf("it is %d characters long; the limit is %d", len(name), server.JSMaxNameLen)
	case strings.ContainsAny(name, " \t\r\n\f"):
		problem = "it contains white space"
	case strings.ContainsAny(name, ".*>\\/"):
		problem = fmt.Sprintf("it contains %q", name[strings.IndexAny(name, ".*>\\/")])
	default:
		return true
	}
	st.errorf(r, "Invalid "+what+" name", "%q is not a valid %s name: %s. Names may not contain white space, '.', '*', '>', '\\' or '/'.", name, what, problem)
	return false
}

// named checks a one-label block's name and uniqueness and returns a decoder for it.
func (st *loadState) named(b *hclsyntax.Block, what string) (string, bool, *decoder) {
	name := b.Labels[0]
	ok := st.checkName(what, name, b.LabelRanges[0])
	ok = ok && st.unique(what+"."+name, what, b.LabelRanges[0])
	return name, ok, newDecoder(st.ctx, st.inline)
}

// blockItems is d.blockItems(b) in a slice that st reuses for the next block: the
// stream and consumer blocks, thousands, only read their items while they decode.
func (st *loadState) blockItems(d *decoder, b *hclsyntax.Block) []item {
	if _, ok := d.inline[b]; ok {
		return d.blockItems(b)
	}
	st.items = appendBodyItems(st.items[:0], b.Body)
	return st.items
}

func (st *loadState) stream(b *hclsyntax.Block) {
	name, ok, d := st.named(b, "stream")
	out := d.object(st.blockItems(d, b), st.streamSpec, "", b.DefRange())
	lc := takeLifecycle(out)
	out["name"] = name
	s := &model.Stream{Kind: model.KindStream, Name: name, Lifecycle: lc,
		Decl: &model.Decl{Range: b.DefRange(), Fields: d.fields}}
	st.decodeInto(d, out, &s.Config, b)
	st.diags = append(st.diags, d.diags...)
	if ok {
		st.m.Streams[name] = s
	}
}

func (st *loadState) consumer(b *hclsyntax.Block) {
	stream, name := b.Labels[0], b.Labels[1]
	ok := st.checkName("stream", stream, b.LabelRanges[0])
	ok = st.checkName("consumer", name, b.LabelRanges[1]) && ok
	ok = ok && st.unique("consumer."+stream+"."+name, "consumer", b.LabelRanges[1])
	d := newDecoder(st.ctx, st.inline)
	out := d.object(st.blockItems(d, b), st.consumerSpec, "", b.DefRange())
	lc := takeLifecycle(out)
	c := &model.Consumer{Stream: stream, Name: name, Lifecycle: lc,
		DeadLetter: deadLetter(out, d.fields), Decl: &model.Decl{Range: b.DefRange(), Fields: d.fields}}
	out["durable_name"] = name
	st.decodeInto(d, out, &c.Config, b)
	st.diags = append(st.diags, d.diags...)
	if ok {
		st.m.Consumers[c.Key()] = c
	}
}

// deadLetter takes the dead_letter block out of out.
func deadLetter(out map[string]any, fields map[string]hcl.Range) *model.DeadLetter {
	if _, ok := out["dead_letter"]; !ok {
		return nil
	}
	var dl deadLetterJSON
	take(out, "dead_letter", &dl)
	return &model.DeadLetter{Stream: dl.Stream, Decl: subDecl(fields, "dead_letter")}
}
