package preflight

import (
	"fmt"
	"strings"

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
