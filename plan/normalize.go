package plan

import (
	"encoding/json"
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

// Declared reports whether the configuration file sets the attribute at a JSON path
// ("ack_wait", "mirror_direct"), even to its zero value. A nil Declared knows only the
// values: a field is set when it is not its zero value.
type Declared func(path string) bool

// set reports whether the field at path is set: declared, or not its zero value.
func (d Declared) set(path string, nonZero bool) bool {
	return nonZero || d != nil && d(path)
}

// NormalizeStream fills the server's defaults into what a desired stream config leaves
// unset, as checkStreamCfgLocked and configUpdateCheckLocked of v2.15.3 do, so that the
// result equals what the server stores. It never changes a value the config sets: where
// the server would, the NP305 check says so. The mirror's mirror_direct is inherited by
// Compute, which knows the origin. cfg is not modified.
func NormalizeStream(cfg server.StreamConfig, t *model.Target) server.StreamConfig {
	return normalizeStream(cfg, t, nil)
}

// normalizeStream is NormalizeStream knowing which attributes the file sets, so that a
// false the file writes is kept where the server would default it to true.
func normalizeStream(cfg server.StreamConfig, t *model.Target, declared Declared) server.StreamConfig {
	// No stream default depends on the limits natsplan knows: under a declared
	// duplicate_window limit below the server's default window, a pedantic request that
	// leaves duplicate_window unset is refused (the preflight says so).
	_ = t
	// The zero StorageType does not marshal, so default it before the copy (a JSON
	// round trip would leave the config as it is).
	if cfg.Storage == 0 {
		cfg.Storage = server.FileStorage
	}
	c := cloneStream(cfg)
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	// 0 is the server's "unlimited"; below -1 stays as set: the server refuses it.
	for _, p := range []*int64{&c.MaxMsgs, &c.MaxMsgsPer, &c.MaxBytes} {
		if *p == 0 {
			*p = -1
		}
	}
	if c.MaxMsgSize == 0 {
		c.MaxMsgSize = -1
	}
	if c.MaxConsumers == 0 {
		c.MaxConsumers = -1
	}
	if c.Duplicates == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.Duplicates = defaultDuplicateWindow
		if c.MaxAge != 0 && c.MaxAge < c.Duplicates {
			c.Duplicates = c.MaxAge
		}
	}
	// Delete markers and schedules need TTLs and roll-ups; the server turns them on
	// when the config leaves them off, and refuses a config that turns them off.
	if c.SubjectDeleteMarkerTTL > 0 && !declared.set("allow_msg_ttl", c.AllowMsgTTL) {
		c.AllowMsgTTL = true
	}
	if (c.SubjectDeleteMarkerTTL > 0 || c.AllowMsgSchedules) && !declared.set("allow_rollup_hdrs", c.AllowRollup) {
		c.AllowRollup = true
	}
	if len(c.Subjects) == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.Subjects = []string{c.Name}
	}
	if c.RePublish != nil && c.RePublish.Source == "" {
		c.RePublish.Source = ">"
	}
	if c.Placement != nil && reflect.DeepEqual(c.Placement, &server.Placement{}) {
		c.Placement = nil
	}
	if c.Sealed {
		// configUpdateCheckLocked gives a sealed stream these values.
		if !declared.set("discard", c.Discard != server.DiscardOld) {
			c.Discard = server.DiscardNew
		}
		if !declared.set("deny_delete", c.DenyDelete) {
			c.DenyDelete = true
		}
		if !declared.set("deny_purge", c.DenyPurge) {
			c.DenyPurge = true
		}
	}
	c.Metadata = userMetadata(c.Metadata)
	return c
}

// NormalizeConsumer fills the server's defaults into what a desired consumer config
// leaves unset, as setConsumerConfigDefaults of v2.15.3 does, given its stream's config
// and the account and server limits of the target. It never changes a value the config
// sets: where the server would, the NP305 check says so. cfg is not modified.
func NormalizeConsumer(cfg server.ConsumerConfig, stream *server.StreamConfig, t *model.Target) server.ConsumerConfig {
	return normalizeConsumer(cfg, stream, t, nil)
}

// normalizeConsumer is NormalizeConsumer knowing which attributes the file sets.
func normalizeConsumer(cfg server.ConsumerConfig, stream *server.StreamConfig, t *model.Target, declared Declared) server.ConsumerConfig {
	c := cloneConsumer(cfg)
	var st server.StreamConfig
	if stream != nil {
		st = *stream
	}
	var lim model.AccountLimits
	var srv server.JSLimitOpts
	if t != nil {
		lim, srv = t.Limits, t.ServerLimits.Options()
	}
	// The new-style create subject sets name = durable_name; natsplan only manages durables.
	if c.Name == "" {
		c.Name = c.Durable
	}
	if c.Durable == "" {
		c.Durable = c.Name
	}
	// 0 is the server's "unlimited"; below -1 stays as set: the server refuses it, as it
	// refuses the negative limits below.
	if c.MaxDeliver == 0 {
		c.MaxDeliver = -1
	}
	pull := c.DeliverSubject == ""
	if pull && c.MaxWaiting == 0 {
		c.MaxWaiting = defaultMaxWaiting
	}
	if c.AckWait == 0 && (c.AckPolicy == server.AckExplicit || c.AckPolicy == server.AckAll) {
		c.AckWait = defaultAckWait
		if len(c.BackOff) > 0 {
			// The server's first backoff step is the ack wait; pedantic mode wants both equal.
			c.AckWait = c.BackOff[0]
		}
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = st.ConsumerLimits.MaxAckPending
	}
	if c.InactiveThreshold == 0 {
		c.InactiveThreshold = st.ConsumerLimits.InactiveThreshold
	}
	if c.MaxAckPending == 0 && c.AckPolicy != server.AckNone {
		c.MaxAckPending = defaultMaxAckPending
		for _, l := range []int{srv.MaxAckPending, lim.MaxAckPending} {
			if l > 0 && l < c.MaxAckPending {
				c.MaxAckPending = l
			}
		}
	}
	// Under a server's max_request_batch limit a pedantic request that leaves max_batch
	// unset is refused (the preflight says so, with the declared limit), so the declared
	// limit fills nothing in here.
	if pull && c.MaxRequestBatch == 0 && lim.MaxRequestBatch > 0 {
		c.MaxRequestBatch = lim.MaxRequestBatch
	}
	if c.PriorityPolicy == server.PriorityPinnedClient && c.PinnedTTL == 0 {
		c.PinnedTTL = defaultPinnedTTL
	}
	if c.AckPolicy == server.AckFlowControl {
		if !declared.set("flow_control", c.FlowControl) {
			c.FlowControl = true
		}
		if c.Heartbeat == 0 {
			c.Heartbeat = flowControlHeartbeat
		}
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
			out = make(map[string]string, len(md))
		}
		out[k] = v
	}
	return out
}

// ownedMetadata is userMetadata(cloneJSON(md)) for a map the caller made and gives
// away (ownership's): the server keys are deleted from it in place, and only a map
// with strings that are not valid UTF-8 (which the JSON round trip changes) takes the
// round trip. One map per declared object instead of three.
func ownedMetadata(md map[string]string) map[string]string {
	for k, v := range md {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return userMetadata(cloneJSON(md))
		}
	}
	for k := range md {
		if strings.HasPrefix(k, model.ServerMetaPrefix) {
			delete(md, k)
		}
	}
	if len(md) == 0 {
		return nil
	}
	return md
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
