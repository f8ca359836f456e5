package plan

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// A plan of an unchanged account compares every declared object with its live twin and
// finds nothing. canonStream and canonConsumer do that through JSON (a deep copy, then
// a generic decode), which is what names the changed fields, but most of a no-change
// plan's time went there (BenchmarkPlanPhases). sameStream and sameConsumer first apply
// the same canonical rewrites to cheap copies and compare the typed values: values that
// are deeply equal marshal to the same JSON, so "same" needs no diff. "Not same" only
// means the JSON diff has to decide (a nil and an empty slice differ here but not there).

// sameStream reports whether a and b are equal in the form canonStream compares. The
// metadata is compared apart (sameUserMetadata), so that no copy of it is made.
func sameStream(a, b server.StreamConfig) bool {
	if !sameUserMetadata(a.Metadata, b.Metadata) {
		return false
	}
	a.Metadata, b.Metadata = nil, nil
	return reflect.DeepEqual(canonStreamValue(a), canonStreamValue(b))
}

// sameConsumer reports whether a and b are equal in the form canonConsumer compares.
func sameConsumer(a, b server.ConsumerConfig, streamReplicas int) bool {
	if !sameUserMetadata(a.Metadata, b.Metadata) {
		return false
	}
	a.Metadata, b.Metadata = nil, nil
	return reflect.DeepEqual(canonConsumerValue(a, streamReplicas), canonConsumerValue(b, streamReplicas))
}

// sameUserMetadata reports whether userMetadata(a) and userMetadata(b) are deeply
// equal, without making them: the same user keys with the same values.
func sameUserMetadata(a, b map[string]string) bool {
	n := 0
	for k, v := range a {
		if strings.HasPrefix(k, model.ServerMetaPrefix) {
			continue
		}
		n++
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	for k := range b {
		if !strings.HasPrefix(k, model.ServerMetaPrefix) {
			n--
		}
	}
	return n == 0
}

// canonStreamValue makes canonStream's rewrites on c, copying whatever it rewrites so
// that the caller's config is never modified.
func canonStreamValue(c server.StreamConfig) server.StreamConfig {
	c.Metadata = userMetadata(c.Metadata)
	c.Subjects = sortedView(c.Subjects)
	if c.Placement != nil {
		p := *c.Placement
		p.Tags = sortedView(p.Tags)
		c.Placement = &p
	}
	if c.Mirror != nil {
		m := *c.Mirror
		m.OptStartTime = utcCopy(m.OptStartTime)
		c.Mirror = &m
		c.MirrorDirect, c.Duplicates = false, 0
	}
	if c.Sources != nil {
		sources := make([]*server.StreamSource, len(c.Sources))
		for i, s := range c.Sources {
			if s != nil {
				cp := *s
				cp.OptStartTime = utcCopy(cp.OptStartTime)
				s = &cp
			}
			sources[i] = s
		}
		c.Sources = sources
	}
	return c
}

// canonConsumerValue makes canonConsumer's rewrites on a copy of c.
func canonConsumerValue(c server.ConsumerConfig, streamReplicas int) server.ConsumerConfig {
	c.Metadata = userMetadata(c.Metadata)
	c.FilterSubjects = sortedView(c.FilterSubjects)
	if c.Replicas == 0 {
		c.Replicas = streamReplicas
	}
	c.PauseUntil = nil
	c.OptStartTime = utcCopy(c.OptStartTime)
	return c
}

// sortedCopy returns a sorted copy of s; nil stays nil.
func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// sortedView is s when it is sorted, else a sorted copy: what is only compared need not
// be copied.
func sortedView(s []string) []string {
	if slices.IsSorted(s) {
		return s
	}
	return sortedCopy(s)
}

// utcCopy returns a pointer to t in UTC; nil stays nil.
func utcCopy(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
