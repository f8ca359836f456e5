package schema

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/subject"
	"github.com/natsplan/natsplan/model"
)

// deadLetterMaxAge is how long a generated dead-letter stream keeps an advisory: long
// enough to get through a holiday; declare the stream to choose otherwise.
const deadLetterMaxAge = 7 * 24 * time.Hour

// expandGroups turns subject_mapping and consumer_group blocks into what the server
// holds: stream subject transforms, one consumer per lane, dead-letter streams. Bad
// partitioning itself (NP201) is left to plan.CheckInvariants, which reports it with
// its code; a mapping that breaks it is not applied and its groups get no lanes.
func expandGroups(ctx context.Context, m *model.Model) hcl.Diagnostics {
	var diags hcl.Diagnostics
	mappings := map[string]*subject.PartitionMapping{}
	for _, mp := range sortedByDecl(m.Mappings, func(mp *model.SubjectMapping) *model.Decl { return mp.Decl }) {
		pm, d := applyMapping(m, mp)
		diags = append(diags, d...)
		if pm != nil {
			mappings[mp.Name] = pm
		}
	}
	for _, g := range sortedByDecl(m.Groups, func(g *model.ConsumerGroup) *model.Decl { return g.Decl }) {
		if ctx.Err() != nil {
			return diags // the caller returns ctx's error
		}
		diags = append(diags, expandGroup(m, g, mappings)...)
	}
	return append(diags, expandDeadLetters(m)...)
}

// sortedByDecl returns the values of a map in source order, so "the second block"
// in a diagnostic is the one written second.
func sortedByDecl[T any](in map[string]T, decl func(T) *model.Decl) []T {
	out := make([]T, 0, len(in))
	for _, v := range in {
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return declLess(decl(out[i]), decl(out[j])) })
	return out
}

func declLess(a, b *model.Decl) bool {
	if a == nil || b == nil {
		return b != nil
	}
	ra, rb := a.Range, b.Range
	if ra.Filename != rb.Filename {
		return ra.Filename < rb.Filename
	}
	return ra.Start.Byte < rb.Start.Byte
}

// diagAt is an error diagnostic at r.
func diagAt(r hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: r.Ptr()}
}

// at renders a declaration's position for a diagnostic's detail.
func at(d *model.Decl) string {
	if s := d.String(); s != "" {
		return " at " + s
	}
	return ""
}

// applyMapping writes a subject_mapping into its stream as the subject_transform.
func applyMapping(m *model.Model, mp *model.SubjectMapping) (*subject.PartitionMapping, hcl.Diagnostics) {
	st := m.Streams[mp.Stream]
	streamAttr := mp.Decl.FieldRange("stream")
	switch {
	case st == nil:
		return nil, hcl.Diagnostics{diagAt(streamAttr, "Undeclared stream",
			"subject_mapping %q applies to stream %q, which is not declared. A mapping becomes its stream's subject_transform, so natsplan must manage the stream: declare stream %q.", mp.Name, mp.Stream, mp.Stream)}
	case st.Kind != model.KindStream:
		return nil, hcl.Diagnostics{diagAt(streamAttr, "Mapping on a bucket",
			"subject_mapping %q names %s, the stream of a %s; partition a plain stream instead.", mp.Name, mp.Stream, st.Kind)}
	case st.Config.SubjectTransform != nil:
		first := "its own subject_transform block" + at(&model.Decl{Range: st.Decl.FieldRange("subject_transform")})
		for _, other := range m.Mappings {
			if other != mp && other.Stream == mp.Stream && declLess(other.Decl, mp.Decl) {
				first = "subject_mapping " + strconv.Quote(other.Name) + at(other.Decl)
			}
		}
		return nil, hcl.Diagnostics{diagAt(streamAttr, "Stream already transformed",
			"Stream %q already gets its subject_transform from %s; a stream carries one transform. Remove one of them, or partition in the other.", mp.Stream, first)}
	}
	pm, merr := subject.ParseMapping(mp.Source, mp.Destination, mp.Partitions, mp.Key)
	if merr != nil {
		return nil, nil
	}
	st.Config.SubjectTransform = pm.Transform()
	if st.Decl != nil && mp.Decl != nil {
		if st.Decl.Fields == nil {
			st.Decl.Fields = map[string]hcl.Range{}
		}
		st.Decl.Fields["subject_transform"] = mp.Decl.Range
	}
	return pm, nil
}

// templateForbidden are consumer fields a group sets itself, with the fix to suggest.
var templateForbidden = map[string]string{
	"filter_subject":  "set filter_subjects on the consumer_group itself",
	"filter_subjects": "set filter_subjects on the consumer_group itself",
	"deliver_subject": "consumer groups are pull consumers that workers fetch from; use a plain consumer for push delivery",
	"deliver_group":   "consumer groups are pull consumers that workers fetch from; use a plain consumer for push delivery",
}

// expandGroup generates the consumers of one consumer_group.
func expandGroup(m *model.Model, g *model.ConsumerGroup, mappings map[string]*subject.PartitionMapping) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range slices.Sorted(maps.Keys(templateForbidden)) {
		if g.TemplateFields[f] {
			diags = append(diags, diagAt(g.FieldRange("consumer."+f), "Not allowed in a group template",
				"%s can not be set in the consumer {} template of consumer_group %q: %s.", f, g.Name, templateForbidden[f]))
		}
	}
	var pm *subject.PartitionMapping
	if g.Mapping != "" {
		mp := m.Mappings[g.Mapping]
		switch {
		case mp == nil:
			return append(diags, diagAt(g.FieldRange("mapping"), "Undeclared subject_mapping",
				"consumer_group %q names subject_mapping %q, which is not declared.%s", g.Name, g.Mapping, didYouMean(g.Mapping, slices.Sorted(maps.Keys(m.Mappings)))))
		case mp.Stream != g.Stream:
			return append(diags, diagAt(g.FieldRange("stream"), "Group and mapping on different streams",
				"consumer_group %q reads stream %q but subject_mapping %q partitions stream %q; set stream = %q.", g.Name, g.Stream, g.Mapping, mp.Stream, mp.Stream))
		}
		if pm = mappings[g.Mapping]; pm == nil {
			return diags // the mapping is invalid; NP201 says why and the group gets no lanes
		}
	}
	if len(diags) > 0 {
		return diags
	}
	if pm == nil {
		return addGenerated(m, g, g.Name, slices.Clone(g.FilterSubjects))
	}
	for p, space := range pm.Spaces() {
		filters := laneFilters(space, g.FilterSubjects)
		if len(filters) == 0 {
			continue // the group's filters exclude the partition: NP202 reports it
		}
		diags = append(diags, addGenerated(m, g, g.Name+"-"+strconv.Itoa(p), filters)...)
	}
	return diags
}

// laneFilters are a lane's filters: its partition's subject space, narrowed by each of
// the group's filters, without filters another one already covers (the server refuses
// filter_subjects where one is a subset of another).
func laneFilters(space string, group []string) []string {
	if len(group) == 0 {
		return []string{space}
	}
	var in []string
	for _, f := range group {
		if x, ok := subject.Intersect(f, space); ok && !slices.Contains(in, x) {
			in = append(in, x)
		}
	}
	var out []string
	for i, f := range in {
		covered := false
		for j, o := range in {
			if i != j && server.SubjectMatchesFilter(f, o) && (f != o || j < i) {
				covered = true
			}
		}
		if !covered {
			out = append(out, f)
		}
	}
	return out
}

// addGenerated adds one consumer generated by group g.
func addGenerated(m *model.Model, g *model.ConsumerGroup, name string, filters []string) hcl.Diagnostics {
	key := model.ConsumerKey{Stream: g.Stream, Name: name}
	if c, ok := m.Consumers[key]; ok {
		return hcl.Diagnostics{diagAt(g.Decl.Range, "Generated consumer already declared",
			"consumer_group %q generates consumer %q on stream %q, which is also declared%s. Rename the group or the consumer.", g.Name, name, g.Stream, at(c.Decl))}
	}
	cfg := g.Template
	cfg.Durable = name
	cfg.FilterSubject = ""
	cfg.FilterSubjects = filters
	if !g.TemplateFields["ack_policy"] {
		cfg.AckPolicy = server.AckExplicit
	}
	if g.Ordering == "per_key" && g.Mapping != "" && !g.TemplateFields["max_ack_pending"] {
		cfg.MaxAckPending = 1
	}
	cfg.Metadata = map[string]string{}
	for k, v := range g.Template.Metadata {
		cfg.Metadata[k] = v
	}
	cfg.Metadata[model.MetaGroup] = g.Address()
	for k, v := range workersMetadata(g.Workers) {
		cfg.Metadata[k] = v
	}
	m.Consumers[key] = &model.Consumer{Stream: g.Stream, Name: name, Config: cfg, Lifecycle: g.Lifecycle,
		Group: g.Address(), Decl: g.Decl, DeadLetter: g.DeadLetter}
	return nil
}

// workersMetadata is the workers {} block as consumer metadata, so a worker can read
// its batch size and timeouts from the server; unset values are left out.
func workersMetadata(w *model.Workers) map[string]string {
	out := map[string]string{}
	if w == nil {
		return out
	}
	put := func(k string, set bool, v string) {
		if set {
			out[model.MetaWorkersPrefix+k] = v
		}
	}
	put("count", w.Count != 0, strconv.Itoa(w.Count))
	put("fetch_batch", w.FetchBatch != 0, strconv.Itoa(w.FetchBatch))
	put("fetch_expires", w.FetchExpires != 0, w.FetchExpires.String())
	put("concurrency", w.Concurrency != 0, strconv.Itoa(w.Concurrency))
	put("handler", w.Handler != "", w.Handler)
	put("max_handler_time", w.MaxHandlerTime != 0, w.MaxHandlerTime.String())
	return out
}

// expandDeadLetters makes every dead_letter { stream } capture the max-deliveries and
// terminated advisories of the consumers it covers: a declared stream gets the
// advisory subjects added, an undeclared one is generated.
func expandDeadLetters(m *model.Model) hcl.Diagnostics {
	if !hasDeadLetters(m) {
		return nil // nothing to expand: no need to sort thousands of consumers' keys
	}
	var diags hcl.Diagnostics
	subjects := map[string][]string{}
	decls := map[string]*model.Decl{}
	for _, k := range m.ConsumerKeys() {
		c := m.Consumers[k]
		if c.DeadLetter == nil || c.DeadLetter.Stream == "" {
			continue
		}
		dl := c.DeadLetter.Stream
		if !subject.ValidName(dl) {
			diags = append(diags, diagAt(c.DeadLetter.Decl.FieldRange("stream"), "Invalid dead-letter stream name",
				"%q is not a valid stream name: names may not be empty nor contain white space, '.', '*', '>', '\\' or '/'.", dl))
			continue
		}
		if dl == c.Stream {
			diags = append(diags, diagAt(c.DeadLetter.Decl.FieldRange("stream"), "Dead letters into the stream they come from",
				"Consumer %q of stream %q sends its dead letters to %q itself; name a separate stream such as %q.", c.Name, c.Stream, dl, c.Stream+"_DLQ"))
			continue
		}
		subjects[dl] = append(subjects[dl], deadLetterSubjects(c.Stream, c.Name)...)
		if decls[dl] == nil || declLess(c.DeadLetter.Decl, decls[dl]) {
			decls[dl] = c.DeadLetter.Decl
		}
	}
	for _, name := range slices.Sorted(maps.Keys(subjects)) {
		subs := subjects[name]
		if st, ok := m.Streams[name]; ok {
			if st.Kind != model.KindStream || st.Config.Mirror != nil {
				diags = append(diags, diagAt(decls[name].FieldRange("stream"), "Dead-letter stream can not capture",
					"Dead letters go to %q, a %s that can not take published messages; name a plain stream.", name, describe(st)))
				continue
			}
			for _, s := range subs {
				if !slices.Contains(st.Config.Subjects, s) {
					st.Config.Subjects = append(st.Config.Subjects, s)
				}
			}
			continue
		}
		m.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream, Decl: decls[name], Config: server.StreamConfig{
			Name:        name,
			Description: "Dead letters (max-deliveries and terminated advisories), generated by natsplan",
			Subjects:    subs,
			Storage:     server.FileStorage,
			Retention:   server.LimitsPolicy,
			Discard:     server.DiscardOld,
			MaxAge:      deadLetterMaxAge,
		}}
	}
	return diags
}

// hasDeadLetters reports whether a consumer of m names a dead-letter stream.
func hasDeadLetters(m *model.Model) bool {
	for _, c := range m.Consumers {
		if c.DeadLetter != nil && c.DeadLetter.Stream != "" {
			return true
		}
	}
	return false
}

// deadLetterSubjects are the advisory subjects a dead-letter stream captures for one
// consumer: messages that exhausted max_deliver, and messages a worker terminated.
func deadLetterSubjects(stream, consumer string) []string {
	return []string{
		server.JSAdvisoryConsumerMaxDeliveryExceedPre + "." + stream + "." + consumer,
		server.JSAdvisoryConsumerMsgTerminatedPre + "." + stream + "." + consumer,
	}
}

func describe(st *model.Stream) string {
	if st.Config.Mirror != nil {
		return "mirror"
	}
	return string(st.Kind)
}
