package plan

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats-server/v2/server"
)

// cloneStream is cloneJSON(c) without the JSON for the configs whose wire form round
// trips: every string valid UTF-8, every enum one of its known values and every time
// one that marshals. For those the round trip is a deep copy in which an empty slice or
// map becomes nil (every one of them is omitempty), and so is this; the rest take the
// round trip. A plan normalises every declared config, and the round trip was most of
// that time. (The unexported StreamSource.iname, which the round trip drops, is only
// ever set inside the server.)
func cloneStream(c server.StreamConfig) server.StreamConfig {
	if out, ok := copyStream(c); ok {
		return out
	}
	return cloneJSON(c)
}

// cloneConsumer is cloneStream for a consumer config.
func cloneConsumer(c server.ConsumerConfig) server.ConsumerConfig {
	if out, ok := copyConsumer(c); ok {
		return out
	}
	return cloneJSON(c)
}

// copyStream is the typed deep copy of cloneStream; ok is false when c's wire form does
// not round trip as the copy assumes.
func copyStream(c server.StreamConfig) (server.StreamConfig, bool) {
	k := copier{ok: knownStreamEnums(c)}
	k.str(c.Name, c.Description)
	c.Subjects = k.strs(c.Subjects)
	if c.Placement = clonePtr(c.Placement); c.Placement != nil {
		k.str(c.Placement.Cluster, c.Placement.Preferred)
		c.Placement.Tags = k.strs(c.Placement.Tags)
	}
	c.Mirror = k.source(c.Mirror)
	if len(c.Sources) == 0 {
		c.Sources = nil
	} else {
		sources := make([]*server.StreamSource, len(c.Sources))
		for i, s := range c.Sources {
			sources[i] = k.source(s)
		}
		c.Sources = sources
	}
	if c.SubjectTransform = clonePtr(c.SubjectTransform); c.SubjectTransform != nil {
		k.str(c.SubjectTransform.Source, c.SubjectTransform.Destination)
	}
	if c.RePublish = clonePtr(c.RePublish); c.RePublish != nil {
		k.str(c.RePublish.Source, c.RePublish.Destination)
	}
	c.Metadata = k.meta(c.Metadata)
	return c, k.ok
}

// copyConsumer is the typed deep copy of cloneConsumer.
func copyConsumer(c server.ConsumerConfig) (server.ConsumerConfig, bool) {
	k := copier{ok: knownConsumerEnums(c)}
	k.str(c.Durable, c.Name, c.Description, c.FilterSubject, c.SampleFrequency, c.DeliverSubject, c.DeliverGroup)
	c.OptStartTime = k.time(c.OptStartTime)
	if len(c.BackOff) == 0 {
		c.BackOff = nil
	} else {
		c.BackOff = slices.Clone(c.BackOff)
	}
	c.FilterSubjects = k.strs(c.FilterSubjects)
	c.Metadata = k.meta(c.Metadata)
	c.PauseUntil = k.time(c.PauseUntil)
	c.PriorityGroups = k.strs(c.PriorityGroups)
	return c, k.ok
}

// knownStreamEnums reports whether every enum of c marshals and reads back as itself.
func knownStreamEnums(c server.StreamConfig) bool {
	return (c.Retention == server.LimitsPolicy || c.Retention == server.InterestPolicy || c.Retention == server.WorkQueuePolicy) &&
		(c.Discard == server.DiscardOld || c.Discard == server.DiscardNew) &&
		(c.Storage == server.FileStorage || c.Storage == server.MemoryStorage) &&
		(c.Compression == server.NoCompression || c.Compression == server.S2Compression) &&
		(c.PersistMode == server.DefaultPersistMode || c.PersistMode == server.AsyncPersistMode)
}

// knownConsumerEnums is knownStreamEnums for a consumer config.
func knownConsumerEnums(c server.ConsumerConfig) bool {
	switch c.DeliverPolicy {
	case server.DeliverAll, server.DeliverLast, server.DeliverNew, server.DeliverByStartSequence,
		server.DeliverByStartTime, server.DeliverLastPerSubject:
	default:
		return false
	}
	switch c.AckPolicy {
	case server.AckNone, server.AckAll, server.AckExplicit, server.AckFlowControl:
	default:
		return false
	}
	switch c.PriorityPolicy {
	case server.PriorityNone, server.PriorityOverflow, server.PriorityPinnedClient, server.PriorityPrioritized:
	default:
		return false
	}
	return c.ReplayPolicy == server.ReplayInstant || c.ReplayPolicy == server.ReplayOriginal
}

// copier copies the parts of a config, noting in ok whether each one round trips.
type copier struct{ ok bool }

// str checks strings: the round trip replaces what is not valid UTF-8.
func (k *copier) str(ss ...string) {
	for _, s := range ss {
		if k.ok && !utf8.ValidString(s) {
			k.ok = false
		}
	}
}

// clonePtr is a pointer to a copy of *p; nil stays nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	cp := *p
	return &cp
}

// strs copies a string slice; an empty one is nil.
func (k *copier) strs(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	for _, x := range s {
		k.str(x)
	}
	return slices.Clone(s)
}

// meta copies a metadata map; an empty one is nil.
func (k *copier) meta(md map[string]string) map[string]string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]string, len(md))
	for key, v := range md {
		k.str(key)
		k.str(v)
		out[key] = v
	}
	return out
}

// time copies a time through its own JSON, as the round trip does: that drops the
// monotonic reading and sets the location from the offset.
func (k *copier) time(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	b, err := t.MarshalJSON()
	var u time.Time
	if err != nil || u.UnmarshalJSON(b) != nil {
		k.ok = false
		return t
	}
	return &u
}

// source copies a stream source.
func (k *copier) source(s *server.StreamSource) *server.StreamSource {
	if s == nil {
		return nil
	}
	cp := *s
	k.str(cp.Name, cp.FilterSubject)
	cp.OptStartTime = k.time(cp.OptStartTime)
	if len(cp.SubjectTransforms) == 0 {
		cp.SubjectTransforms = nil
	} else {
		cp.SubjectTransforms = slices.Clone(cp.SubjectTransforms)
		for _, t := range cp.SubjectTransforms {
			k.str(t.Source, t.Destination)
		}
	}
	if cp.External = clonePtr(cp.External); cp.External != nil {
		k.str(cp.External.ApiPrefix, cp.External.DeliverPrefix)
	}
	if cp.Consumer = clonePtr(cp.Consumer); cp.Consumer != nil {
		k.str(cp.Consumer.Name, cp.Consumer.DeliverSubject)
	}
	return &cp
}
