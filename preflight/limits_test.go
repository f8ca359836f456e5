package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// declared returns server limits as a natsplan block at limits.hcl declares them, one
// attribute a line from line 2.
func declared(l model.ServerLimits) *model.ServerLimits {
	l.Decl = &model.Decl{Range: hcl.Range{Filename: "limits.hcl", Start: hcl.Pos{Line: 1, Column: 1}}, Fields: map[string]hcl.Range{}}
	for i, f := range []string{"max_request_batch", "max_ack_pending", "duplicate_window"} {
		l.Decl.Fields[f] = hcl.Range{Filename: "limits.hcl", Start: hcl.Pos{Line: i + 2, Column: 3}}
	}
	return &l
}

// TestDeclaredLimitsRefused: the private server runs with the declared limits, so what
// the target would refuse under them is NP304 at the attribute (or at the block when the
// file leaves it unset), naming the limit and where it is declared.
func TestDeclaredLimitsRefused(t *testing.T) {
	limits := declared(model.ServerLimits{MaxRequestBatch: 1, MaxAckPending: 100, Duplicates: time.Minute})
	for _, tc := range []struct {
		name   string
		stream server.StreamConfig
		fields []string // the stream's declared attributes, from c.hcl:2:3
		limits *model.ServerLimits
		want   string // "" for no finding
	}{
		{name: "duplicate window above the limit", stream: server.StreamConfig{Subjects: []string{"a"}, Duplicates: 2 * time.Minute},
			fields: []string{"subjects", "duplicate_window"}, limits: limits,
			want: "c.hcl:3:3: duplicates window can not be larger then server limit of 1m0s .*limit is 1m0s (declared at limits.hcl:4:3): set duplicate_window to at most 1m0s"},
		{name: "default window above the limit", stream: server.StreamConfig{Subjects: []string{"a"}, MaxAge: time.Hour},
			fields: []string{"subjects", "max_age"}, limits: limits,
			want: "c.hcl:1:1: duplicates window can not be larger then server limit"},
		{name: "window within the limit", stream: server.StreamConfig{Subjects: []string{"a"}, Duplicates: time.Minute},
			fields: []string{"subjects", "duplicate_window"}, limits: limits},
		{name: "no limits declared", stream: server.StreamConfig{Subjects: []string{"a"}, Duplicates: 2 * time.Minute},
			fields: []string{"subjects", "duplicate_window"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := desiredStream("S", tc.stream, tc.fields...)
			d.ServerLimits = tc.limits
			live := model.New()
			res, err := Check(context.Background(), computePlan(t, d, live), d, live)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(res.Findings) != 0 {
					t.Fatalf("findings %v, want none", res.Findings)
				}
				return
			}
			if len(res.Findings) != 1 {
				t.Fatalf("%d findings, want 1: %v", len(res.Findings), res.Findings)
			}
			f := res.Findings[0]
			pos, text, _ := strings.Cut(tc.want, ": ")
			head, tail, _ := strings.Cut(text, " .*")
			if f.Range != pos || !strings.Contains(f.Message, head) || !strings.Contains(f.Message, tail) {
				t.Fatalf("finding at %s: %s\nwant at %s: %s", f.Range, f.Message, pos, text)
			}
		})
	}
}

// TestContradictions: an object on the target that the declared limits say the server
// would refuse is a warning at the declared limit.
func TestContradictions(t *testing.T) {
	limits := declared(model.ServerLimits{MaxRequestBatch: 1, MaxAckPending: 100, Duplicates: time.Minute})
	live := model.New()
	live.Streams["S"] = &model.Stream{Name: "S", Kind: model.KindStream, Config: server.StreamConfig{Name: "S", Duplicates: 2 * time.Minute}}
	live.Streams["T"] = &model.Stream{Name: "T", Kind: model.KindStream, Config: server.StreamConfig{Name: "T", Duplicates: time.Minute}}
	for _, c := range []server.ConsumerConfig{
		{Durable: "batch", MaxRequestBatch: 5},
		{Durable: "ackp", MaxRequestBatch: 1, MaxAckPending: 1000},
		{Durable: "push", DeliverSubject: "d", MaxAckPending: 10},
		{Durable: "fine", MaxRequestBatch: 1, MaxAckPending: 100},
	} {
		live.Consumers[model.ConsumerKey{Stream: "T", Name: c.Durable}] = &model.Consumer{Stream: "T", Name: c.Durable, Config: c}
	}
	for _, tc := range []struct {
		name   string
		limits *model.ServerLimits
		want   []string // address at range
	}{
		{name: "none declared"},
		{name: "all declared", limits: limits,
			want: []string{"stream.S at limits.hcl:4:3", "consumer.T.ackp at limits.hcl:3:3", "consumer.T.batch at limits.hcl:2:3"}},
		{name: "only max_ack_pending", limits: declared(model.ServerLimits{MaxAckPending: 100}),
			want: []string{"consumer.T.ackp at limits.hcl:3:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := model.New()
			d.ServerLimits = tc.limits
			var got []string
			for _, f := range Contradictions(d, live) {
				if f.Code != finding.CodeServerRefuses || f.Severity != finding.SevWarning {
					t.Errorf("%s: %s %s, want an NP304 warning", f.Address, f.Code, f.Severity)
				}
				got = append(got, f.Address+" at "+f.Range)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
