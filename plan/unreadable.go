package plan

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// keepUnreadableDefaults lets the live value stand for consumer fields the files leave
// unset whose server default comes from a server-wide JetStream limit
// (jetstream { limits { max_request_batch, max_ack_pending } }). An account can not
// read those limits, so the normalised desired side can not know the default; without
// this, a server with such limits would show a perpetual diff. The cost, documented in
// docs/planning.md: an out-of-band change of such an unset field is not reported.
// A limit the files declare (natsplan { server_limits {} }) is known: normalisation
// has used it, and the live value no longer stands for that field.
func keepUnreadableDefaults(user, want, live server.ConsumerConfig, t *model.Target) server.ConsumerConfig {
	var lim model.AccountLimits
	var srv server.JSLimitOpts
	if t != nil {
		lim, srv = t.Limits, t.ServerLimits.Options()
	}
	if user.MaxRequestBatch == 0 && want.DeliverSubject == "" && lim.MaxRequestBatch == 0 && srv.MaxRequestBatch == 0 {
		want.MaxRequestBatch = live.MaxRequestBatch
	}
	if user.MaxAckPending == 0 && want.AckPolicy != server.AckNone && srv.MaxAckPending == 0 &&
		live.MaxAckPending > 0 && live.MaxAckPending < want.MaxAckPending {
		want.MaxAckPending = live.MaxAckPending
	}
	return want
}

// normTarget is the target normalisation works with: live's, with the server limits
// the files declare, which no account can read. live.Target is not modified; without
// declared limits it is returned as it is.
func normTarget(desired, live *model.Model) *model.Target {
	var t *model.Target
	if live != nil {
		t = live.Target
	}
	if desired == nil || desired.ServerLimits == nil {
		return t
	}
	out := &model.Target{}
	if t != nil {
		*out = *t
	}
	out.ServerLimits = desired.ServerLimits
	return out
}
