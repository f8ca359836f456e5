package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// limitedTarget is a live model whose account has the given limits and cluster size.
func limitedTarget(peers int, tiers map[string]server.JetStreamAccountLimits, objs ...liveObj) *model.Model {
	m := liveOf(5, objs...)
	m.Target.Tiers, m.Target.Peers = tiers, peers
	return m
}

// unlimited are an account's limits with nothing set.
func unlimited() server.JetStreamAccountLimits {
	return server.JetStreamAccountLimits{MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1}
}

func declaredStreams(streams ...server.StreamConfig) *model.Model {
	m := model.New()
	m.Project = "p"
	for i, cfg := range streams {
		d := &model.Decl{Range: hcl.Range{Filename: "c.hcl", Start: hcl.Pos{Line: 10 * (i + 1), Column: 1}},
			Fields: map[string]hcl.Range{
				"max_bytes":    {Filename: "c.hcl", Start: hcl.Pos{Line: 10*(i+1) + 1, Column: 3}},
				"num_replicas": {Filename: "c.hcl", Start: hcl.Pos{Line: 10*(i+1) + 2, Column: 3}},
			}}
		m.Streams[cfg.Name] = &model.Stream{Name: cfg.Name, Kind: model.KindStream, Config: cfg, Decl: d}
	}
	return m
}

// withLock enables the apply lock in m, with bucket ("" for the default).
func withLock(m *model.Model, bucket string) *model.Model {
	m.Lock = &model.Lock{Bucket: bucket}
	return m
}

func limitStream(name string, maxBytes int64, replicas int) server.StreamConfig {
	return server.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, MaxBytes: maxBytes, Replicas: replicas}
}

// TestAccountLimits: NP403 follows the server's rules for counts and reservations, in
// apply's order, at the attribute or block the server would refuse.
func TestAccountLimits(t *testing.T) {
	owned := map[string]string{model.MetaProject: "p"}
	tiered := map[string]server.JetStreamAccountLimits{"R1": unlimited(), "R3": unlimited()}
	r3 := tiered["R3"]
	r3.MaxStreams = 1
	tiered["R3"] = r3
	storeLimit := unlimited()
	storeLimit.MaxStore = 100 << 20
	streamsLimit := unlimited()
	streamsLimit.MaxStreams = 2
	for _, tc := range []struct {
		name    string
		desired *model.Model
		live    *model.Model
		want    []string // "code range" of every NP403
	}{
		{"unlimited", declaredStreams(limitStream("A", 1<<30, 3)), limitedTarget(3, map[string]server.JetStreamAccountLimits{"": unlimited()}), nil},
		{"replicas above the cluster", declaredStreams(limitStream("A", 0, 5)), limitedTarget(3, nil), []string{"c.hcl:12:3"}},
		{"cluster size unknown", declaredStreams(limitStream("A", 0, 5)), limitedTarget(0, nil), nil},
		{"account-wide reservation counts every replica", declaredStreams(limitStream("A", 40<<20, 3)),
			limitedTarget(3, map[string]server.JetStreamAccountLimits{"": storeLimit}), []string{"c.hcl:11:3"}},
		{"one replica fits", declaredStreams(limitStream("A", 40<<20, 1)),
			limitedTarget(3, map[string]server.JetStreamAccountLimits{"": storeLimit}), nil},
		{"the other streams' reservations count", declaredStreams(limitStream("A", 60<<20, 1)),
			limitedTarget(3, map[string]server.JetStreamAccountLimits{"": storeLimit}, liveObj{cfg: limitStream("LIVE", 50<<20, 1)}),
			[]string{"c.hcl:11:3"}},
		{"deletes run after creates", declaredStreams(limitStream("A", 0, 1), limitStream("B", 0, 1)),
			limitedTarget(1, map[string]server.JetStreamAccountLimits{"": streamsLimit},
				liveObj{cfg: limitStream("OLD1", 0, 1), meta: owned}, liveObj{cfg: limitStream("OLD2", 0, 1), meta: owned}),
			[]string{"c.hcl:10:1", "c.hcl:20:1"}},
		{"tiers count apart", declaredStreams(limitStream("A", 0, 3), limitStream("B", 0, 1), limitStream("C", 0, 3)),
			limitedTarget(3, tiered), []string{"c.hcl:30:1"}},
		{"no tier for the replicas", declaredStreams(limitStream("A", 0, 5)),
			limitedTarget(5, tiered), []string{"c.hcl:12:3"}},
		{"the apply lock's new bucket takes a stream", withLock(declaredStreams(limitStream("A", 0, 1)), ""),
			limitedTarget(1, map[string]server.JetStreamAccountLimits{"": streamsLimit}, liveObj{cfg: limitStream("OTHER", 0, 1)}),
			[]string{"c.hcl:10:1"}},
		{"the apply lock's bucket exists", withLock(declaredStreams(limitStream("A", 0, 1)), "locks"),
			limitedTarget(1, map[string]server.JetStreamAccountLimits{"": streamsLimit}, liveObj{cfg: limitStream("KV_locks", 0, 1)}),
			nil},
		{"no lock, no bucket", declaredStreams(limitStream("A", 0, 1)),
			limitedTarget(1, map[string]server.JetStreamAccountLimits{"": streamsLimit}, liveObj{cfg: limitStream("OTHER", 0, 1)}),
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.Compute(tc.desired, tc.live, plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range p.Findings {
				if f.Code == finding.CodeAccountLimits {
					got = append(got, f.Range)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("NP403 at %v, want %v; findings:\n%s", got, tc.want, findingsText(p))
			}
		})
	}
}

func findingsText(p *plan.Plan) string {
	var b strings.Builder
	for _, f := range p.Findings {
		fmt.Fprintf(&b, "  %s %s %s %s\n", f.Code, f.Address, f.Range, f.Message)
	}
	return b.String()
}
