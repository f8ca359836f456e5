package plan

import (
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// groupConfig is the normalised config every consumer of g gets: the template with
// the group's defaults (explicit acks; one message in flight per per-key lane).
func (v *invariants) groupConfig(g *model.ConsumerGroup) server.ConsumerConfig {
	cfg := g.Template
	if !g.TemplateFields["ack_policy"] {
		cfg.AckPolicy = server.AckExplicit
	}
	if g.Ordering == "per_key" && g.Mapping != "" && !g.TemplateFields["max_ack_pending"] {
		cfg.MaxAckPending = 1
	}
	return normalizeConsumer(cfg, v.streamConfig(g.Stream), v.target, func(p string) bool { return g.TemplateFields[p] })
}

// checkGroup runs the checks of one consumer_group: ordering, dead letters, and how
// its workers pull (NP101–NP109), then its partition coverage (NP202).
func (v *invariants) checkGroup(g *model.ConsumerGroup) {
	addr := g.Address()
	cfg := v.groupConfig(g)
	mapped := g.Mapping != ""
	switch {
	case g.Ordering == "per_key" && !mapped:
		v.add(finding.CodePerKeyOrdering, finding.SevError, addr, g.FieldRange("ordering"),
			"ordering = \"per_key\" without a mapping: one consumer serves every key, and with several messages in "+
				"flight events of one key finish out of order. Set mapping to a subject_mapping of stream %s so each "+
				"key has one lane, or drop per_key", g.Stream)
	case g.Ordering == "per_key" && cfg.MaxAckPending != 1:
		v.add(finding.CodePerKeyOrdering, finding.SevError, addr, g.FieldRange("consumer.max_ack_pending"),
			"ordering = \"per_key\" but each lane allows max_ack_pending = %d messages in flight: the lane hands "+
				"several events of one key to workers at once and they finish out of order. Remove max_ack_pending "+
				"from the template (per_key lanes use 1); add partitions for more parallelism", cfg.MaxAckPending)
	case !mapped && cfg.MaxAckPending == 1:
		v.add(finding.CodeGlobalSerialisation, finding.SevWarning, addr, g.FieldRange("consumer.max_ack_pending"),
			"max_ack_pending = 1 on the shared consumer %s: every worker waits for the one message in flight, so "+
				"the whole group handles one message at a time however many workers run. If order matters per key, "+
				"partition with a subject_mapping and ordering = \"per_key\"; otherwise raise max_ack_pending", g.Name)
	}
	if cfg.MaxDeliver > 0 && g.DeadLetter == nil {
		v.add(finding.CodeNoDeadLetter, finding.SevWarning, addr, g.FieldRange("consumer.max_deliver"), noDeadLetter, cfg.MaxDeliver)
	}
	if w := g.Workers; w != nil {
		v.checkWorkers(g, w, cfg)
	}
	if mapped {
		v.checkCoverage(g)
	}
}

const noDeadLetter = "max_deliver = %d with no dead_letter: after the last delivery the server stops delivering the " +
	"message and only publishes an advisory nobody stores, so the message is silently dropped from processing. " +
	"Add dead_letter { stream = \"...\" } to capture those advisories"

// checkWorkers checks the workers {} settings against the consumer config they pull from.
func (v *invariants) checkWorkers(g *model.ConsumerGroup, w *model.Workers, cfg server.ConsumerConfig) {
	addr := g.Address()
	if w.Handler == "cpu" && w.Concurrency > 1 {
		v.add(finding.CodeCPUConcurrency, finding.SevWarning, addr, g.FieldRange("workers.concurrency"),
			"handler = \"cpu\" with concurrency = %d: handlers that compute share the process's CPU, so more "+
				"messages at once in one process only add contention. Set concurrency = 1 and raise count "+
				"(more processes) instead", w.Concurrency)
	}
	ackWait := cfg.AckWait
	if w.MaxHandlerTime > 0 && cfg.AckPolicy != server.AckNone {
		short, field := time.Duration(0), "consumer.ack_wait"
		if ackWait <= w.MaxHandlerTime {
			short = ackWait
			if !g.TemplateFields["ack_wait"] {
				field = "workers.max_handler_time"
			}
		}
		for _, b := range cfg.BackOff {
			if b <= w.MaxHandlerTime && (short == 0 || b < short) {
				short, field = b, "consumer.backoff"
			}
		}
		if short > 0 {
			v.add(finding.CodeAckWait, finding.SevError, addr, g.FieldRange(field),
				"the server redelivers a message unacked after %s but a handler may take up to %s: a second worker "+
					"gets the message while the first still works on it, so it is handled twice. Set ack_wait (and "+
					"every backoff step) above max_handler_time, or make handlers extend it with in-progress acks",
				short, w.MaxHandlerTime)
		}
	}
	lanes := 1
	if pm := v.groupMapping(g); pm != nil {
		lanes = pm.Partitions
	}
	maxp := cfg.MaxAckPending
	switch {
	case maxp <= 0 || w.FetchBatch == 0:
	case w.FetchBatch > maxp:
		v.add(finding.CodeFetchAboveAckPending, finding.SevError, addr, g.FieldRange("workers.fetch_batch"),
			"fetch_batch = %d is above max_ack_pending = %d: the server hands a fetch at most %d messages and the "+
				"request then waits out its expiry for the rest, so every fetch takes the full timeout. Set "+
				"fetch_batch <= %d or raise max_ack_pending", w.FetchBatch, maxp, maxp, maxp)
	case w.Count > 0 && w.Count*w.FetchBatch > lanes*maxp:
		v.add(finding.CodeAckPendingPool, finding.SevWarning, addr, g.FieldRange("workers.count"),
			"count × fetch_batch = %d × %d = %d messages wanted in flight, but max_ack_pending allows %d in total "+
				"(it is one pool shared by all workers%s): some workers idle, and adding workers does not add "+
				"throughput. Raise max_ack_pending to at least %d or lower fetch_batch",
			w.Count, w.FetchBatch, w.Count*w.FetchBatch, lanes*maxp, lanesNote(lanes, maxp), ceilDiv(w.Count*w.FetchBatch, lanes))
	}
	if cfg.MaxWaiting > 0 && w.Count > cfg.MaxWaiting {
		v.add(finding.CodePullLimits, finding.SevError, addr, g.FieldRange("workers.count"),
			"%d workers each keep a pull request waiting, but max_waiting = %d: the server answers the extra "+
				"requests with 409 Exceeded MaxWaiting. Raise max_waiting (it is fixed when the consumer is created) "+
				"or run fewer workers", w.Count, cfg.MaxWaiting)
	}
	if cfg.MaxRequestBatch > 0 && w.FetchBatch > cfg.MaxRequestBatch {
		v.add(finding.CodePullLimits, finding.SevError, addr, g.FieldRange("workers.fetch_batch"),
			"fetch_batch = %d is above max_batch = %d: every fetch is refused with 409 Exceeded MaxRequestBatch. "+
				"Set fetch_batch <= %d or raise max_batch (the server's max_request_batch caps it)",
			w.FetchBatch, cfg.MaxRequestBatch, cfg.MaxRequestBatch)
	}
	if cfg.MaxRequestExpires > 0 && w.FetchExpires > cfg.MaxRequestExpires {
		v.add(finding.CodePullLimits, finding.SevError, addr, g.FieldRange("workers.fetch_expires"),
			"fetch_expires = %s is above max_expires = %s: every fetch is refused with 409 Exceeded "+
				"MaxRequestExpires. Lower fetch_expires or raise max_expires", w.FetchExpires, cfg.MaxRequestExpires)
	}
}

func lanesNote(lanes, maxp int) string {
	if lanes == 1 {
		return ""
	}
	return ", here " + strconv.Itoa(lanes) + " lanes × " + strconv.Itoa(maxp)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// checkPlainConsumer runs the checks that apply to a consumer block.
func (v *invariants) checkPlainConsumer(c *model.Consumer) {
	cfg := v.config(c)
	if cfg.MaxDeliver > 0 && c.DeadLetter == nil {
		v.add(finding.CodeNoDeadLetter, finding.SevWarning, c.Address(), c.Decl.FieldRange("max_deliver"), noDeadLetter, cfg.MaxDeliver)
	}
}
