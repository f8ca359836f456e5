package plan

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// Server constants of v2.15.3 that shape defaults; the fidelity tests fail when an
// upgrade changes one of them.
const (
	defaultDuplicateWindow = 2 * time.Minute  // StreamDefaultDuplicatesWindow
	defaultMaxWaiting      = 512              // JSWaitQueueDefaultMax
	defaultAckWait         = 30 * time.Second // JsAckWaitDefault
	defaultMaxAckPending   = 1000             // JsDefaultMaxAckPending
	defaultPinnedTTL       = 2 * time.Minute  // JsDefaultPinnedTTL
	flowControlHeartbeat   = time.Second      // sourceHealthHB
)

// NormalizeStream fills the server's defaults into a desired stream config exactly as
// checkStreamCfgLocked and configUpdateCheckLocked of v2.15.3 do, so that the result
// equals what the server stores. The mirror's mirror_direct is inherited by Compute,
// which knows the origin. cfg is not modified.
func NormalizeStream(cfg server.StreamConfig, t *model.Target) server.StreamConfig {
	_ = t // no stream default depends on the account limits natsplan reads
	// The zero StorageType does not marshal, so default it before the JSON copy.
	if cfg.Storage == 0 {
		cfg.Storage = server.FileStorage
	}
	c := cloneJSON(cfg)
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	c.MaxMsgs = unlimited64(c.MaxMsgs)
	c.MaxMsgsPer = unlimited64(c.MaxMsgsPer)
	c.MaxBytes = unlimited64(c.MaxBytes)
	if c.MaxMsgSize == 0 || c.MaxMsgSize < -1 {
		c.MaxMsgSize = -1
	}
	if c.MaxConsumers == 0 || c.MaxConsumers < -1 {
		c.MaxConsumers = -1
	}
	if c.Duplicates == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.Duplicates = defaultDuplicateWindow
		if c.MaxAge != 0 && c.MaxAge < c.Duplicates {
			c.Duplicates = c.MaxAge
		}
	}
	if c.SubjectDeleteMarkerTTL > 0 {
		c.AllowMsgTTL = true
		if !c.AllowRollup {
			c.AllowRollup, c.DenyPurge = true, false
		}
	}
	if c.AllowMsgSchedules && !c.AllowRollup {
		c.AllowRollup, c.DenyPurge = true, false
	}
	if len(c.Subjects) == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.Subjects = []string{c.Name}
	}
	if c.RePublish != nil {
		if c.RePublish.Source == "" {
			c.RePublish.Source = ">"
		}
		if c.RePublish.Source == ">" && c.RePublish.Destination == ">" && c.SubjectTransform != nil &&
			len(c.Subjects) == 1 && c.SubjectTransform.Source == c.Subjects[0] {
			c.RePublish.Source = c.SubjectTransform.Destination
			c.RePublish.Destination = c.SubjectTransform.Destination
		}
	}
	if c.Placement != nil && reflect.DeepEqual(c.Placement, &server.Placement{}) {
		c.Placement = nil
	}
	if c.Sealed {
		// configUpdateCheckLocked rewrites these when a stream is sealed.
		c.MaxAge, c.Discard = 0, server.DiscardNew
		c.DenyDelete, c.DenyPurge, c.AllowRollup = true, true, false
	}
	c.Metadata = userMetadata(c.Metadata)
	return c
}

// NormalizeConsumer fills the server's defaults into a desired consumer config exactly
// as setConsumerConfigDefaults of v2.15.3 does, given its stream's config and the
// account and server limits of the target. cfg is not modified.
func NormalizeConsumer(cfg server.ConsumerConfig, stream *server.StreamConfig, t *model.Target) server.ConsumerConfig {
	c := cloneJSON(cfg)
	var st server.StreamConfig
	if stream != nil {
		st = *stream
	}
	var lim model.AccountLimits
	if t != nil {
		lim = t.Limits
	}
	// The new-style create subject sets name = durable_name; natsplan only manages durables.
	if c.Name == "" {
		c.Name = c.Durable
	}
	if c.Durable == "" {
		c.Durable = c.Name
	}
	if c.MaxDeliver == 0 || c.MaxDeliver < -1 {
		c.MaxDeliver = -1
	}
	for _, p := range []*int{&c.MaxWaiting, &c.MaxRequestBatch, &c.MaxRequestMaxBytes} {
		if *p < 0 {
			*p = 0
		}
	}
	for _, p := range []*time.Duration{&c.MaxRequestExpires, &c.Heartbeat, &c.InactiveThreshold, &c.PinnedTTL} {
		if *p < 0 {
			*p = 0
		}
	}
	if c.MaxAckPending < -1 {
		c.MaxAckPending = -1
	}
	pull := c.DeliverSubject == ""
	if pull && c.MaxWaiting == 0 {
		c.MaxWaiting = defaultMaxWaiting
	}
	if c.AckWait == 0 && (c.AckPolicy == server.AckExplicit || c.AckPolicy == server.AckAll) {
		c.AckWait = defaultAckWait
	}
	if len(c.BackOff) > 0 {
		c.AckWait = c.BackOff[0]
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = st.ConsumerLimits.MaxAckPending
	}
	if c.InactiveThreshold == 0 {
		c.InactiveThreshold = st.ConsumerLimits.InactiveThreshold
	}
	if c.MaxAckPending == 0 && c.AckPolicy != server.AckNone {
		c.MaxAckPending = defaultMaxAckPending
		if lim.MaxAckPending > 0 && lim.MaxAckPending < c.MaxAckPending {
			c.MaxAckPending = lim.MaxAckPending
		}
	}
	if pull && c.MaxRequestBatch == 0 && lim.MaxRequestBatch > 0 {
		c.MaxRequestBatch = lim.MaxRequestBatch
	}
	if c.PriorityPolicy == server.PriorityPinnedClient && c.PinnedTTL == 0 {
		c.PinnedTTL = defaultPinnedTTL
	}
	if c.AckPolicy == server.AckFlowControl {
		c.FlowControl = true
		c.Heartbeat = flowControlHeartbeat
	}
	c.Metadata = userMetadata(c.Metadata)
	return c
}

// userMetadata returns md without the server-owned _nats.* keys; nil when empty, as
// the server omits an empty map.
func userMetadata(md map[string]string) map[string]string {
	var out map[string]string
	for k, v := range md {
		if strings.HasPrefix(k, model.ServerMetaPrefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// unlimited64 maps the server's "no limit" spellings (0 and below -1) to -1.
func unlimited64(v int64) int64 {
	if v == 0 || v < -1 {
		return -1
	}
	return v
}

// cloneJSON deep-copies a config through its wire form, which is the form that matters.
func cloneJSON[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// jsonStrings is cloneJSON of a string map: a copy, in which only strings that are not
// valid UTF-8 change (their bad bytes become U+FFFD), so valid ones skip the JSON.
func jsonStrings(md map[string]string) map[string]string {
	for k, v := range md {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return cloneJSON(md)
		}
	}
	return maps.Clone(md)
}
