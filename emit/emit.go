// Package emit writes natsplan HCL for live objects: `natsplan import`. Only the
// values that differ from what the server would fill in are written, so the files
// say what someone chose, and planning them against the same server shows no change.
package emit

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/zclconf/go-cty/cty"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/schema"
)

// Options select what Import writes.
type Options struct {
	// Streams are glob patterns (path.Match) over stream names, bucket names and
	// addresses ("ORD*", "KV_*", "kv.*", "sessions"); none selects everything.
	Streams []string
	// Project is written as natsplan { project = ... } first. When empty, the
	// project that owns the selected objects is used if there is exactly one;
	// otherwise no natsplan block is written (the output is meant to join files
	// that have one) and a comment says so.
	Project string
}

// kvOrder and objectStoreOrder are the orders bucket attributes are written in.
func kvOrder() []string {
	return []string{"description", "storage", "history", "ttl", "limit_marker_ttl", "max_value_size",
		"max_bytes", "num_replicas", "compression", "metadata"}
}

func objectStoreOrder() []string {
	return []string{"description", "storage", "ttl", "max_bytes", "num_replicas", "compression", "metadata"}
}

// Import returns HCL declaring the selected live streams, KV buckets and object
// stores with their durable consumers, formatted as `natsplan fmt` would. Consumers
// the server or client libraries create for themselves and ephemeral consumers are
// left out; server-owned (_nats.*) metadata and natsplan's own marks are stripped
// (prevent_destroy becomes a lifecycle block). A glob that selects nothing is an error.
func Import(live *model.Model, o Options) ([]byte, error) {
	for _, g := range o.Streams {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("import: bad pattern %q: %w", g, err)
		}
	}
	matched := make([]bool, len(o.Streams))
	var streams []*model.Stream
	for _, name := range live.StreamNames() {
		if s := live.Streams[name]; selected(s, o.Streams, matched) {
			streams = append(streams, s)
		}
	}
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	project := o.Project
	if project == "" {
		project = soleOwner(streams, live)
	}
	if project != "" {
		body.AppendNewBlock("natsplan", nil).Body().SetAttributeValue("project", cty.StringVal(project))
	} else {
		body.AppendUnstructuredTokens(comment("# Add these blocks to files with a natsplan { project = \"...\" } block."))
	}
	body.AppendNewline()
	for _, s := range streams {
		if err := writeStream(body, s, live); err != nil {
			return nil, fmt.Errorf("import %s: %w", s.Address(), err)
		}
	}
	var unmatched []string
	for i, ok := range matched {
		if !ok {
			unmatched = append(unmatched, o.Streams[i])
		}
	}
	if len(unmatched) > 0 {
		return nil, fmt.Errorf("import: no live stream, kv bucket or object store matches %s: check the names with `nats stream ls`",
			strings.Join(unmatched, ", "))
	}
	out, diags := schema.Format(f.Bytes(), "import.hcl")
	if diags.HasErrors() {
		return nil, fmt.Errorf("import: format the generated HCL: %s", diags.Error())
	}
	return out, nil
}

// soleOwner is the project that owns the streams or their consumers, when exactly
// one does.
func soleOwner(streams []*model.Stream, live *model.Model) string {
	owners := map[string]bool{}
	for _, s := range streams {
		owners[s.Owner()] = true
		for _, c := range live.ConsumersOf(s.Name) {
			owners[c.Owner()] = true
		}
	}
	delete(owners, "")
	if len(owners) != 1 {
		return ""
	}
	for o := range owners {
		return o
	}
	return ""
}

// selected reports whether s matches any glob (all when there are none), noting
// which globs matched.
func selected(s *model.Stream, globs []string, matched []bool) bool {
	if len(globs) == 0 {
		return true
	}
	hit := false
	for i, g := range globs {
		for _, name := range []string{s.Name, s.Bucket, s.Address()} {
			if ok, _ := path.Match(g, name); ok && name != "" {
				matched[i], hit = true, true
			}
		}
	}
	return hit
}

// writeStream appends the block of s, then blocks for its durable consumers.
func writeStream(body *hclwrite.Body, s *model.Stream, live *model.Model) error {
	_, prevent := ownMetadata(s.Config.Metadata)
	var block *hclwrite.Block
	fields, isBucket := map[string]any(nil), false
	if s.Kind == model.KindKV || s.Kind == model.KindObjectStore {
		fields, isBucket = bucketFields(s, live.Target)
	}
	switch {
	case isBucket && s.Kind == model.KindKV:
		block = body.AppendNewBlock("kv", []string{s.Bucket})
		if err := writeFields(block.Body(), fields, kvOrder()); err != nil {
			return err
		}
	case isBucket:
		block = body.AppendNewBlock("object_store", []string{s.Bucket})
		if err := writeFields(block.Body(), fields, objectStoreOrder()); err != nil {
			return err
		}
	default:
		cfg := s.Config
		cfg.Metadata, _ = ownMetadata(cfg.Metadata)
		m, err := minimalStream(cfg, live.Target)
		if err != nil {
			return err
		}
		block = body.AppendNewBlock("stream", []string{s.Name})
		if s.Kind != model.KindStream {
			block.Body().AppendUnstructuredTokens(comment(fmt.Sprintf(
				"# %s %s differs from what a %s block declares, so it is imported as a stream.", s.Kind, s.Bucket, s.Kind)))
		}
		if err := writeFields(block.Body(), m, jsonOrder(reflect.TypeFor[server.StreamConfig]())); err != nil {
			return err
		}
	}
	writeLifecycle(block.Body(), prevent)
	body.AppendNewline()
	for _, c := range live.ConsumersOf(s.Name) {
		if c.IsSystem() || c.Config.Durable == "" {
			continue
		}
		if g := c.Config.Metadata[model.MetaGroup]; g != "" {
			// Generated by a consumer_group, which import can not reconstruct. The
			// mark holds the group's address, consumer_group.NAME: name it as a block.
			body.AppendUnstructuredTokens(comment(fmt.Sprintf(
				"# consumer %q %q is generated by consumer_group %q: declare that group to manage it.",
				s.Name, c.Name, strings.TrimPrefix(g, "consumer_group."))))
			continue
		}
		cfg := c.Config
		var cprevent bool
		cfg.Metadata, cprevent = ownMetadata(cfg.Metadata)
		m, err := minimalConsumer(cfg, &s.Config, live.Target)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", c.Name, err)
		}
		cb := body.AppendNewBlock("consumer", []string{s.Name, c.Name})
		if err := writeFields(cb.Body(), m, jsonOrder(reflect.TypeFor[server.ConsumerConfig]())); err != nil {
			return fmt.Errorf("consumer %s: %w", c.Name, err)
		}
		writeLifecycle(cb.Body(), cprevent)
		body.AppendNewline()
	}
	return nil
}

func writeLifecycle(body *hclwrite.Body, prevent bool) {
	if prevent {
		body.AppendNewBlock("lifecycle", nil).Body().SetAttributeValue("prevent_destroy", cty.True)
	}
}

func comment(text string) hclwrite.Tokens {
	return hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte(text + "\n")}}
}
