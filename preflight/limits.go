package preflight

import (
	"fmt"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
)

// Error codes of refusals that come from the server's own JetStream limits.
const (
	errMaxBatchAboveLimit  = 10125 // max_batch above max_request_batch
	errAckPendingAboveLim  = 10121 // max_ack_pending above a server or account limit
	errPedantic            = 10157 // a default the server would have filled in
	errStreamInvalidConfig = 10052 // duplicate_window above the server's limit
)

// limitNote explains a refusal that the declared server limits cause: which limit,
// where the files declare it, and what to set; field is the attribute to set, which
// the finding points at (or at the block, when the file leaves it unset). note is ""
// for any other refusal, and when no limit is declared (then the private server has
// none, and can not refuse for one).
func limitNote(l *model.ServerLimits, consumer bool, e *jsapi.Error) (note, field string) {
	if l == nil {
		return "", ""
	}
	reason := strings.ToLower(e.Description)
	at := func(field string) string {
		if p := rangeOf(l.Decl, []string{field}); p != "" {
			return " (declared at " + p + ")"
		}
		return ""
	}
	batch := func(what string) string {
		return fmt.Sprintf("the target's max_request_batch is %d%s: %s", l.MaxRequestBatch, at("max_request_batch"), what)
	}
	dup := func(what string) string {
		return fmt.Sprintf("the target's duplicate_window limit is %s%s: %s", l.Duplicates, at("duplicate_window"), what)
	}
	switch {
	case !consumer && l.Duplicates > 0 && (e.ErrCode == errPedantic && strings.Contains(reason, "duplicate window limits") ||
		e.ErrCode == errStreamInvalidConfig && strings.Contains(reason, "server limit")):
		return dup(fmt.Sprintf("set duplicate_window to at most %s", l.Duplicates)), "duplicate_window"
	case !consumer:
		return "", ""
	case l.MaxRequestBatch > 0 && (e.ErrCode == errMaxBatchAboveLimit ||
		e.ErrCode == errPedantic && strings.Contains(reason, "max_request_batch")):
		return batch(fmt.Sprintf("set max_batch to at most %d", l.MaxRequestBatch)), "max_batch"
	case l.MaxAckPending > 0 && e.ErrCode == errAckPendingAboveLim && strings.HasSuffix(reason, fmt.Sprintf("limit of %d", l.MaxAckPending)):
		return fmt.Sprintf("the target's max_ack_pending is %d%s: set max_ack_pending to at most %d",
			l.MaxAckPending, at("max_ack_pending"), l.MaxAckPending), "max_ack_pending"
	}
	return "", ""
}

// Contradictions are NP304 warnings for objects on the target that the declared server
// limits say the server would refuse: a pull consumer whose max_batch is above
// max_request_batch, a consumer whose max_ack_pending is above max_ack_pending, a stream
// whose duplicate window is above the duplicate_window limit. The server checks those
// limits at every create and update, so such an object means the declaration is not the
// server's (or the server's limits were lowered since it was made): a plan checked
// against the declaration may then refuse what the server takes, or miss what it
// refuses. Each finding points at the declared limit.
func Contradictions(desired, live *model.Model) []*finding.Finding {
	if desired == nil || live == nil || desired.ServerLimits == nil {
		return nil
	}
	l := desired.ServerLimits
	var out []*finding.Finding
	warn := func(addr, field, format string, args ...any) {
		out = append(out, &finding.Finding{Code: finding.CodeServerRefuses, Severity: finding.SevWarning, Address: addr,
			Range: rangeOf(l.Decl, []string{field}),
			Message: fmt.Sprintf(format, args...) + fmt.Sprintf(": the server refuses that under the limit declared here, so the "+
				"server's %s is not what natsplan { server_limits {} } says, or was lowered since; check the declaration "+
				"against the server's jetstream { limits {} }", field)})
	}
	for _, name := range live.StreamNames() {
		if d := live.Streams[name].Config.Duplicates; l.Duplicates > 0 && d > l.Duplicates {
			warn(live.Streams[name].Address(), "duplicate_window", "stream %s on the server has a duplicate window of %s, above the declared limit of %s",
				name, d, l.Duplicates)
		}
	}
	for _, k := range live.ConsumerKeys() {
		lc := live.Consumers[k]
		cfg := lc.Config
		switch {
		case l.MaxRequestBatch > 0 && cfg.DeliverSubject == "" && cfg.MaxRequestBatch > l.MaxRequestBatch:
			warn(lc.Address(), "max_request_batch", "consumer %s.%s on the server has max_batch %d, above the declared max_request_batch of %d",
				lc.Stream, lc.Name, cfg.MaxRequestBatch, l.MaxRequestBatch)
		case l.MaxAckPending > 0 && cfg.MaxAckPending > l.MaxAckPending:
			warn(lc.Address(), "max_ack_pending", "consumer %s.%s on the server has max_ack_pending %d, above the declared max_ack_pending of %d",
				lc.Stream, lc.Name, cfg.MaxAckPending, l.MaxAckPending)
		}
	}
	return out
}
