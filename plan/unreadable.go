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
func keepUnreadableDefaults(user, want, live server.ConsumerConfig, t *model.Target) server.ConsumerConfig {
	var lim model.AccountLimits
	if t != nil {
		lim = t.Limits
	}
	if user.MaxRequestBatch == 0 && want.DeliverSubject == "" && lim.MaxRequestBatch == 0 {
		want.MaxRequestBatch = live.MaxRequestBatch
	}
	if user.MaxAckPending == 0 && want.AckPolicy != server.AckNone &&
		live.MaxAckPending > 0 && live.MaxAckPending < want.MaxAckPending {
		want.MaxAckPending = live.MaxAckPending
	}
	return want
}
