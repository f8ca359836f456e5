package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

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
		Tiers:    tiers(ai),
		Peers:    peers(nc, c.Prefix),
	}, nil
}

// tiers are the account's limits keyed the way the server selects them: "" for
// account-wide limits, else the replica tier. The server reports tiered limits with the
// account-wide ones left zero.
func tiers(ai *server.JetStreamAccountStats) map[string]server.JetStreamAccountLimits {
	if ai.Limits != (server.JetStreamAccountLimits{}) || len(ai.Tiers) == 0 {
		return map[string]server.JetStreamAccountLimits{"": ai.Limits}
	}
	out := make(map[string]server.JetStreamAccountLimits, len(ai.Tiers))
	for name, t := range ai.Tiers {
		out[name] = t.Limits
	}
	return out
}

// peers is the number of servers a replica can be placed on, as far as a client can
// tell: 1 for a JetStream server outside a cluster; in a cluster, the distinct servers
// the cluster advertises to clients (its connect URLs). It is 0, unknown, when the
// JetStream answering is not the connected server's (a leaf node without JetStream, a
// request to another domain) or when a cluster advertises fewer than 2 servers
// (no_advertise): no replica count is refused on a guess.
func peers(nc *nats.Conn, prefix string) int {
	if js, _ := nc.ConnectedServerJetStream(); !js {
		return 0
	}
	if d := nc.ConnectedDomain(); prefix != "$JS.API" && prefix != "$JS."+d+".API" {
		return 0
	}
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	seen := map[string]bool{}
	for _, u := range nc.Servers() {
		if p, err := url.Parse(u); err == nil {
			seen[p.Host] = true
		}
	}
	if len(seen) < 2 {
		return 0
	}
	return len(seen)
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
