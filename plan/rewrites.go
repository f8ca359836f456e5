package plan

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// rewrites collects the values of one config the server changes or refuses.
type rewrites []rewrite

// refuse adds a value the server refuses in pedantic mode.
func (l *rewrites) refuse(path, format string, args ...any) {
	*l = append(*l, rewrite{path: path, refused: true, msg: fmt.Sprintf(format, args...)})
}

// keep adds a value the server replaces with another, which the message names.
func (l *rewrites) keep(path, format string, args ...any) {
	*l = append(*l, rewrite{path: path, msg: fmt.Sprintf(format, args...)})
}

// rewrite is one value the file sets that the server changes or refuses.
type rewrite struct {
	path string
	// refused: the server refuses the value in pedantic mode; else it stores another.
	refused bool
	msg     string
}

// streamDeclared is what the file sets of a declared stream, bucket or object store.
func streamDeclared(s *model.Stream) Declared {
	if s == nil || s.Decl == nil {
		return nil
	}
	return func(path string) bool {
		_, ok := s.Decl.Fields[path]
		return ok
	}
}

// consumerDeclared is what the file sets of a declared consumer: its own block's
// attributes, or the consumer {} template of the group that generated it.
func consumerDeclared(c *model.Consumer) Declared {
	if c == nil || c.Decl == nil {
		return nil
	}
	prefix := ""
	if c.Group != "" {
		prefix = "consumer."
	}
	return func(path string) bool {
		_, ok := c.Decl.Fields[prefix+path]
		return ok
	}
}

// checkRewrites reports, for every declared stream and consumer, the values the file
// sets that the server would rewrite or refuse (checkStreamCfgLocked,
// configUpdateCheckLocked, setConsumerConfigDefaults and checkConsumerCfg of v2.15.3).
func (v *invariants) checkRewrites() {
	for _, name := range v.streamNames(v.desired) {
		s := v.desired.Streams[name]
		var origin *server.StreamConfig
		if m := s.Config.Mirror; m != nil && m.External == nil {
			origin = v.streamConfig(m.Name)
		}
		for _, rw := range streamRewrites(s.Config, streamDeclared(s), origin) {
			v.addRewrite(s.Address(), s.Decl.FieldRange(rw.path), rw)
		}
	}
	for _, k := range v.consumerKeys(v.desired) {
		c := v.desired.Consumers[k]
		for _, rw := range consumerRewrites(c.Config, v.config(c), v.streamConfig(c.Stream), consumerDeclared(c)) {
			v.addRewrite(c.Address(), v.consumerRange(c, rw.path), rw)
		}
	}
}

func (v *invariants) addRewrite(addr string, r hcl.Range, rw rewrite) {
	sev := finding.SevWarning
	if rw.refused {
		sev = finding.SevError
	}
	v.out = append(v.out, &finding.Finding{Code: finding.CodeRewrite, Severity: sev, Address: addr, Message: rw.msg, Range: rangeString(r)})
}

// dur spells a duration as the language writes it ("2m", "1h30m").
func dur(d time.Duration) string { return model.FormatDuration(d) }

// streamRewrites lists the values of cfg (as the file declares it) that the server
// rewrites or refuses. origin is the config of a mirror's origin, when known.
func streamRewrites(cfg server.StreamConfig, declared Declared, origin *server.StreamConfig) []rewrite {
	var out rewrites
	refuse, keep := out.refuse, out.keep
	for _, l := range []struct {
		path string
		v    int64
	}{{"max_msgs", cfg.MaxMsgs}, {"max_msgs_per_subject", cfg.MaxMsgsPer}, {"max_bytes", cfg.MaxBytes},
		{"max_msg_size", int64(cfg.MaxMsgSize)}, {"max_consumers", int64(cfg.MaxConsumers)}} {
		if l.v < -1 {
			refuse(l.path, "%s = %d: the server reads a limit below -1 as unlimited (-1) and refuses it in pedantic mode, "+
				"which natsplan uses; write -1, or leave %s out, for no limit", l.path, l.v, l.path)
		}
	}
	mirrored := cfg.Mirror != nil || len(cfg.Sources) > 0
	if declared.set("duplicate_window", false) && cfg.Duplicates == 0 && !mirrored {
		win := defaultDuplicateWindow
		if cfg.MaxAge != 0 && cfg.MaxAge < win {
			win = cfg.MaxAge
		}
		keep("duplicate_window", "duplicate_window = 0 does not turn deduplication off: the server keeps its default "+
			"window of %s; set the window you want, or leave duplicate_window out", dur(win))
	}
	// Only where the file writes it: a kv mirror bucket carries the window the NATS
	// clients send, which the file does not.
	if cfg.Mirror != nil && cfg.Duplicates != 0 && declared.set("duplicate_window", false) {
		keep("duplicate_window", "duplicate_window = %s on a mirror: a mirror does not deduplicate, and the server drops "+
			"the setting from a mirror's config when it restarts, so it keeps none and natsplan does not compare it; "+
			"remove duplicate_window", dur(cfg.Duplicates))
	}
	needs := ""
	switch {
	case cfg.SubjectDeleteMarkerTTL > 0:
		needs = "subject_delete_marker_ttl"
	case cfg.AllowMsgSchedules:
		needs = "allow_msg_schedules"
	}
	if cfg.SubjectDeleteMarkerTTL > 0 && !cfg.AllowMsgTTL && declared.set("allow_msg_ttl", false) {
		refuse("allow_msg_ttl", "allow_msg_ttl = false with subject_delete_marker_ttl: delete markers are messages with "+
			"a TTL, so the server turns allow_msg_ttl on, and refuses false in pedantic mode, which natsplan uses; "+
			"remove allow_msg_ttl = false")
	}
	if needs != "" && !cfg.AllowRollup && declared.set("allow_rollup_hdrs", false) {
		refuse("allow_rollup_hdrs", "allow_rollup_hdrs = false with %s, which needs roll-ups: the server turns them on, "+
			"and refuses false in pedantic mode, which natsplan uses; remove allow_rollup_hdrs = false", needs)
	}
	if needs != "" && cfg.DenyPurge {
		refuse("deny_purge", "deny_purge = true with %s: it needs roll-ups, roll-ups need the purge permission, and "+
			"the server refuses the combination (without pedantic mode it would keep deny_purge = false); remove deny_purge", needs)
	}
	if rp := cfg.RePublish; rp != nil && (rp.Source == "" || rp.Source == ">") && rp.Destination == ">" &&
		cfg.SubjectTransform != nil && len(cfg.Subjects) == 1 && cfg.SubjectTransform.Source == cfg.Subjects[0] {
		dest := cfg.SubjectTransform.Destination
		refuse("republish", "republish from \">\" to \">\" on a stream whose only subject is transformed: the server reads "+
			"it as src = dest = %q (the transform's destination), and refuses the implicit form in pedantic mode, which "+
			"natsplan uses; write republish { src = %q, dest = %q }", dest, dest, dest)
	}
	if cfg.Mirror != nil && origin != nil && declared.set("mirror_direct", false) && cfg.MirrorDirect != origin.AllowDirect {
		refuse("mirror_direct", "mirror_direct = %t: the server gives a mirror its origin's allow_direct (%t on stream %s) "+
			"and refuses another value in pedantic mode, which natsplan uses; remove mirror_direct, or set "+
			"allow_direct = %t on %s", cfg.MirrorDirect, origin.AllowDirect, cfg.Mirror.Name, cfg.MirrorDirect, cfg.Mirror.Name)
	}
	if cfg.Sealed {
		out = append(out, sealedRewrites(cfg, declared)...)
	}
	return out
}

// sealedRewrites are the values a sealed stream can not keep: configUpdateCheckLocked
// sets them, in pedantic mode too.
func sealedRewrites(cfg server.StreamConfig, declared Declared) []rewrite {
	var out []rewrite
	keep := func(path, format string, args ...any) {
		out = append(out, rewrite{path: path, msg: fmt.Sprintf(format, args...) +
			"; remove it from the file, or the plan shows this difference after every apply"})
	}
	if cfg.MaxAge != 0 {
		keep("max_age", "max_age = %s on a sealed stream: the server keeps max_age 0 (messages never expire)", dur(cfg.MaxAge))
	}
	if cfg.Discard == server.DiscardOld && declared.set("discard", false) {
		keep("discard", "discard = \"old\" on a sealed stream: the server keeps discard \"new\"")
	}
	if !cfg.DenyDelete && declared.set("deny_delete", false) {
		keep("deny_delete", "deny_delete = false on a sealed stream: the server keeps deny_delete true, which can not "+
			"be turned off again (NP303)")
	}
	if !cfg.DenyPurge && declared.set("deny_purge", false) {
		keep("deny_purge", "deny_purge = false on a sealed stream: the server keeps deny_purge true, which can not "+
			"be turned off again (NP303)")
	}
	if cfg.AllowRollup {
		if !cfg.DenyPurge && declared.set("deny_purge", false) {
			keep("allow_rollup_hdrs", "allow_rollup_hdrs = true on a sealed stream: the server keeps allow_rollup_hdrs false")
		} else {
			out = append(out, rewrite{path: "allow_rollup_hdrs", refused: true, msg: "allow_rollup_hdrs = true on a " +
				"sealed stream: sealing denies purges, roll-ups need the purge permission, and the server refuses the " +
				"combination; remove allow_rollup_hdrs"})
		}
	}
	return out
}

// consumerRewrites lists the values of cfg (as the file declares it) that the server
// rewrites or refuses. norm is cfg normalised, stream the normalised stream config.
func consumerRewrites(cfg, norm server.ConsumerConfig, stream *server.StreamConfig, declared Declared) []rewrite {
	var out rewrites
	refuse, keep := out.refuse, out.keep
	for _, l := range []struct {
		path string
		v    int
	}{{"max_deliver", cfg.MaxDeliver}, {"max_ack_pending", cfg.MaxAckPending}} {
		if l.v < -1 {
			refuse(l.path, "%s = %d: the server reads a value below -1 as unlimited (-1) and refuses it in pedantic "+
				"mode, which natsplan uses; write -1, or leave %s out, for no limit", l.path, l.v, l.path)
		}
	}
	for _, n := range []struct {
		path string
		neg  bool
		v    any
	}{{"max_waiting", cfg.MaxWaiting < 0, cfg.MaxWaiting}, {"max_batch", cfg.MaxRequestBatch < 0, cfg.MaxRequestBatch},
		{"max_bytes", cfg.MaxRequestMaxBytes < 0, cfg.MaxRequestMaxBytes},
		{"max_expires", cfg.MaxRequestExpires < 0, cfg.MaxRequestExpires}, {"idle_heartbeat", cfg.Heartbeat < 0, cfg.Heartbeat},
		{"inactive_threshold", cfg.InactiveThreshold < 0, cfg.InactiveThreshold},
		{"priority_timeout", cfg.PinnedTTL < 0, cfg.PinnedTTL}} {
		if n.neg {
			refuse(n.path, "%s = %v: the server reads a negative value as 0 (unset) and refuses it in pedantic mode, "+
				"which natsplan uses; leave %s out", n.path, n.v, n.path)
		}
	}
	acks := cfg.AckPolicy == server.AckExplicit || cfg.AckPolicy == server.AckAll
	if len(cfg.BackOff) > 0 && cfg.AckWait != 0 && cfg.AckWait != cfg.BackOff[0] {
		refuse("ack_wait", "ack_wait = %s with backoff starting at %s: the server's first redelivery waits the first "+
			"backoff step, so it would keep ack_wait = %s, and refuses a different ack_wait in pedantic mode, which "+
			"natsplan uses; remove ack_wait, or make it the first backoff step", dur(cfg.AckWait), dur(cfg.BackOff[0]), dur(cfg.BackOff[0]))
	}
	// kept, what the server keeps (a time.Duration or an int), is rendered only when
	// there is something to say.
	zero := func(path string, applies bool, kept any, why string) {
		if applies && declared.set(path, false) {
			k := fmt.Sprint(kept)
			if d, ok := kept.(time.Duration); ok {
				k = dur(d)
			}
			keep(path, "%s = 0 %s: the server keeps %s = %s; set the value you want, or leave %s out", path, why, path, k, path)
		}
	}
	zero("ack_wait", acks && cfg.AckWait == 0, norm.AckWait, "is not \"no ack wait\"")
	zero("max_waiting", cfg.DeliverSubject == "" && cfg.MaxWaiting == 0, norm.MaxWaiting, "is not \"no waiting requests\"")
	zero("max_ack_pending", cfg.AckPolicy != server.AckNone && cfg.MaxAckPending == 0 && norm.MaxAckPending != 0,
		norm.MaxAckPending, "is not \"unlimited\" (-1 is)")
	zero("inactive_threshold", cfg.InactiveThreshold == 0 && norm.InactiveThreshold != 0, norm.InactiveThreshold,
		"takes the stream's consumer_limits")
	zero("priority_timeout", cfg.PriorityPolicy == server.PriorityPinnedClient && cfg.PinnedTTL == 0, norm.PinnedTTL,
		"is not \"pin forever\"")
	if cfg.AckPolicy == server.AckFlowControl {
		if !cfg.FlowControl && declared.set("flow_control", false) {
			refuse("flow_control", "flow_control = false with ack_policy = \"flow_control\": the server turns flow control "+
				"on without pedantic mode and refuses false with it, which natsplan uses; remove flow_control = false")
		}
		if cfg.Heartbeat != 0 && cfg.Heartbeat != flowControlHeartbeat {
			refuse("idle_heartbeat", "idle_heartbeat = %s with ack_policy = \"flow_control\": the server uses a %s "+
				"heartbeat for flow-control acks (it would keep %s) and refuses another in pedantic mode, which natsplan "+
				"uses; remove idle_heartbeat", dur(cfg.Heartbeat), dur(flowControlHeartbeat), dur(flowControlHeartbeat))
		}
		zero("idle_heartbeat", cfg.Heartbeat == 0, flowControlHeartbeat, "with ack_policy = \"flow_control\"")
	}
	if stream != nil && cfg.Replicas > 0 && stream.Replicas > 0 && cfg.Replicas > stream.Replicas {
		refuse("num_replicas", "num_replicas = %d on a stream with %d replica(s): the server refuses more replicas than "+
			"the stream has (and lowers them to the stream's when the stream scales down); remove num_replicas, "+
			"or set it to at most %d", cfg.Replicas, stream.Replicas, stream.Replicas)
	}
	return out
}
