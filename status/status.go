// Package status reads the live counters of what the files declare and names the
// concurrency condition that holds (the NP5xx codes, docs/status.md).
//
// Read is the only function that talks to the server; Evaluate is a pure function of
// the desired model and one or two samples, so a condition can be tested from values
// and the renderers only read the Report it returns.
package status

import (
	"time"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// FormatVersion is the version of the status document.
const FormatVersion = "1"

// The live condition codes; each has a page docs/rules/<code>.md.
const (
	CodePoolSaturated finding.Code = "NP501"
	CodeRedeliveries  finding.Code = "NP502"
	CodeHotLane       finding.Code = "NP503"
	CodeNobodyPulls   finding.Code = "NP504"
	CodeDeadLetters   finding.Code = "NP505"
	CodeRuntimeFanOut finding.Code = "NP506"
	CodeParkedPulls   finding.Code = "NP507"
)

// Codes lists every live condition code in order: the prometheus output writes a
// gauge for each, zero when it does not hold, so an alert has a series to watch.
var Codes = []finding.Code{CodePoolSaturated, CodeRedeliveries, CodeHotLane, CodeNobodyPulls, CodeDeadLetters, CodeRuntimeFanOut, CodeParkedPulls}

// Thresholds are the judgements a condition needs; the defaults are documented in
// docs/commands/status.md.
type Thresholds struct {
	// LaneSkew is how many times the median lane's backlog the busiest lane must hold
	// to be far behind (NP503).
	LaneSkew float64
	// LaneBacklog is the backlog (pending plus in flight) below which no lane is
	// called far behind, however skewed (NP503).
	LaneBacklog uint64
	// Idle is how long a consumer with messages waiting may go without a delivery
	// before nobody pulls (NP504); a consumer active within it counts as live (NP506).
	Idle time.Duration
}

// DefaultThresholds are the thresholds when no flag changes them.
func DefaultThresholds() Thresholds {
	return Thresholds{LaneSkew: 10, LaneBacklog: 100, Idle: 30 * time.Second}
}

// Sample is one read of the server: the live model restricted to the declared
// streams' consumers, and when it was taken.
type Sample struct {
	Time time.Time
	Live *model.Model
}

// Report is the status document: every counter read, per consumer and per group,
// and the conditions that hold. Renderers only read it.
type Report struct {
	FormatVersion string        `json:"format_version"`
	Target        *model.Target `json:"target,omitempty"`
	Time          time.Time     `json:"time"`
	// Interval is the time since the previous sample, in seconds, when rates are known.
	Interval    float64       `json:"interval_seconds,omitempty"`
	Groups      []*Group      `json:"groups"`
	Consumers   []*Consumer   `json:"consumers"`
	DeadLetters []*DeadLetter `json:"dead_letters"`
	Findings    []*Finding    `json:"findings"`
	// Offline lists objects the server listed but could not report.
	Offline []string `json:"offline,omitempty"`
}

// Healthy reports whether no condition holds and every declared consumer exists.
func (r *Report) Healthy() bool {
	if len(r.Findings) > 0 {
		return false
	}
	for _, c := range r.Consumers {
		if c.Missing {
			return false
		}
	}
	return true
}

// Missing returns the declared consumers the server does not have.
func (r *Report) Missing() []*Consumer {
	var out []*Consumer
	for _, c := range r.Consumers {
		if c.Missing {
			out = append(out, c)
		}
	}
	return out
}

// Consumer is the counters of one consumer.
type Consumer struct {
	Address string `json:"address"`
	Stream  string `json:"stream"`
	Name    string `json:"name"`
	// Group is the address of the consumer_group that generated it; Lane is its
	// partition when the group is partitioned ("" otherwise).
	Group    string `json:"group,omitempty"`
	Lane     string `json:"lane,omitempty"`
	Declared bool   `json:"declared"`
	Decl     string `json:"decl,omitempty"`
	// Missing marks a declared consumer the server does not have (deleted out of
	// band, or never applied); its counters are zero.
	Missing bool `json:"missing,omitempty"`

	NumPending     uint64 `json:"num_pending"`
	NumAckPending  int    `json:"num_ack_pending"`
	MaxAckPending  int    `json:"max_ack_pending"`
	NumRedelivered int    `json:"num_redelivered"`
	NumWaiting     int    `json:"num_waiting"`
	PushBound      bool   `json:"push_bound,omitempty"`
	Paused         bool   `json:"paused,omitempty"`
	// Delivered and AckFloor are the server's consumer sequences: deliveries made, and
	// deliveries below which every one is acknowledged.
	Delivered uint64 `json:"delivered_consumer_seq"`
	AckFloor  uint64 `json:"ack_floor_consumer_seq"`
	// LastDelivery and LastAck are when a message was last delivered and acknowledged.
	LastDelivery *time.Time `json:"last_delivery,omitempty"`
	LastAck      *time.Time `json:"last_ack,omitempty"`
	// DeadLetter is the stream capturing this consumer's dead letters, if declared.
	DeadLetter string `json:"dead_letter,omitempty"`
	Rates      *Rates `json:"rates,omitempty"`

	filters []string
	system  bool
	ackNone bool
	created time.Time
}

// Backlog is what the consumer still has to do: pending plus in flight.
func (c *Consumer) Backlog() uint64 { return c.NumPending + uint64(max(c.NumAckPending, 0)) }

// Group is a consumer_group: its consumers' counters summed.
type Group struct {
	Address    string   `json:"address"`
	Name       string   `json:"name"`
	Stream     string   `json:"stream"`
	Partitions bool     `json:"partitioned"`
	Consumers  []string `json:"consumers"`
	DeadLetter string   `json:"dead_letter,omitempty"`
	Decl       string   `json:"decl,omitempty"`

	NumPending     uint64 `json:"num_pending"`
	NumAckPending  int    `json:"num_ack_pending"`
	MaxAckPending  int    `json:"max_ack_pending"`
	NumRedelivered int    `json:"num_redelivered"`
	NumWaiting     int    `json:"num_waiting"`
	Rates          *Rates `json:"rates,omitempty"`
	// DrainSeconds estimates how long the backlog takes to clear at the rate it
	// shrank since the previous sample; nil when it did not shrink (or no rates yet).
	DrainSeconds *float64 `json:"drain_seconds,omitempty"`
}

// Backlog is the group's pending plus in flight.
func (g *Group) Backlog() uint64 { return g.NumPending + uint64(max(g.NumAckPending, 0)) }

// DeadLetter is the state of a dead-letter stream.
type DeadLetter struct {
	Address string `json:"address"`
	Stream  string `json:"stream"`
	// Missing marks a dead-letter stream the server does not have.
	Missing bool       `json:"missing,omitempty"`
	Msgs    uint64     `json:"messages"`
	LastSeq uint64     `json:"last_seq"`
	Newest  *time.Time `json:"newest,omitempty"`
	// For lists the addresses of the groups and consumers whose dead letters it holds.
	For  []string `json:"for"`
	Decl string   `json:"decl,omitempty"`
}

// Rates are per-second changes between two samples (docs/status.md says how each is
// derived and where the estimates are rough).
type Rates struct {
	Delivered     float64 `json:"delivered_per_second"`
	Acked         float64 `json:"acked_per_second"`
	Redelivered   float64 `json:"redelivered_per_second"`
	PendingGrowth float64 `json:"pending_growth_per_second"`
}

// Finding is a condition that holds: the plan's finding shape, with the counters that
// prove it and what to change.
type Finding struct {
	finding.Finding
	Fix string `json:"fix"`
	// Counters are the numbers the condition was judged on, by their server names.
	Counters map[string]any `json:"counters"`
}
