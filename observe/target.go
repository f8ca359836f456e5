package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
)

// userInfoTimeout bounds the account lookup, which is optional: a server with the
// system account disabled, or a user not allowed to ask, must not slow a plan down.
const userInfoTimeout = 2 * time.Second

// readTarget describes the server and account read: where the connection landed,
// the JetStream API level and domain, and the account's limits.
func readTarget(ctx context.Context, c *jsapi.Client) (*model.Target, error) {
	ai, err := c.AccountInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("observe account: %w", err)
	}
	nc := c.NC
	return &model.Target{
		URL:      redactToken(nc.ConnectedUrlRedacted()),
		Server:   nc.ConnectedServerName(),
		Cluster:  nc.ConnectedClusterName(),
		Domain:   ai.Domain,
		Account:  accountName(ctx, c),
		APILevel: ai.API.Level,
		Version:  nc.ConnectedServerVersion(),
		Limits:   limits(ai),
	}, nil
}

// redactToken hides a token given as the user-info of a URL (nats://TOKEN@host), which
// url.URL.Redacted leaves visible because it only hides passwords.
func redactToken(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, hasPassword := u.User.Password(); !hasPassword {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// accountName asks the server which account the connection is bound to
// ($SYS.REQ.USER.INFO, which the server imports into every account). It returns ""
// when the server does not answer, and at once when the user may not ask (with the
// client's Denials the violation ends the request; nothing is printed).
func accountName(ctx context.Context, c *jsapi.Client) string {
	timeout := min(c.Timeout, userInfoTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := c.RawRequest(ctx, "$SYS.REQ.USER.INFO", nil)
	if err != nil {
		return ""
	}
	var r struct {
		Data *server.UserInfo `json:"data"`
	}
	if json.Unmarshal(msg.Data, &r) != nil || r.Data == nil {
		return ""
	}
	return r.Data.Account
}

// limits are the account's JetStream limits. With tiered limits (per replica count)
// the account-wide ones are unset; then the strictest tier is used, because a
// desired config must fit whichever tier its replicas select.
func limits(ai *server.JetStreamAccountStats) model.AccountLimits {
	l := ai.Limits
	out := model.AccountLimits{
		MaxStreams:       l.MaxStreams,
		MaxConsumers:     l.MaxConsumers,
		MaxAckPending:    l.MaxAckPending,
		MaxBytesRequired: l.MaxBytesRequired,
	}
	if l != (server.JetStreamAccountLimits{}) || len(ai.Tiers) == 0 {
		return out
	}
	for _, t := range ai.Tiers {
		out.MaxStreams = strictest(out.MaxStreams, t.Limits.MaxStreams)
		out.MaxConsumers = strictest(out.MaxConsumers, t.Limits.MaxConsumers)
		out.MaxAckPending = strictest(out.MaxAckPending, t.Limits.MaxAckPending)
		out.MaxBytesRequired = out.MaxBytesRequired || t.Limits.MaxBytesRequired
	}
	return out
}

// strictest combines two limits where 0 and -1 mean unlimited.
func strictest(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
