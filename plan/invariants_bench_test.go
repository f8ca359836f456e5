package plan_test

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/subject"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// benchModel is a large account: streams × consumers per stream, each stream with a
// partitioned group of 16 lanes and a live per-process durable beside it.
func benchModel(streams, consumers int) (*model.Model, *model.Model) {
	desired, live := model.New(), model.New()
	desired.Project = "bench"
	live.Target = &model.Target{APILevel: 5}
	for s := range streams {
		name := fmt.Sprintf("S%d", s)
		subj := fmt.Sprintf("s%d.>", s)
		desired.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream,
			Config: server.StreamConfig{Name: name, Subjects: []string{subj}}}
		mp := &model.SubjectMapping{Name: "m" + name, Stream: name, Source: fmt.Sprintf("s%d.*.*", s), Partitions: 16, Key: []int{1}}
		desired.Mappings[mp.Name] = mp
		pm, _ := subject.ParseMapping(mp.Source, "", 16, mp.Key)
		desired.Streams[name].Config.SubjectTransform = pm.Transform()
		g := &model.ConsumerGroup{Name: "g" + name, Stream: name, Mapping: mp.Name, Ordering: "per_key",
			Workers: &model.Workers{Count: 4, FetchBatch: 1}, TemplateFields: map[string]bool{}}
		desired.Groups[g.Name] = g
		for p, space := range pm.Spaces() {
			c := &model.Consumer{Stream: name, Name: fmt.Sprintf("%s-%d", g.Name, p), Group: g.Address(),
				Config: server.ConsumerConfig{Durable: fmt.Sprintf("%s-%d", g.Name, p), AckPolicy: server.AckExplicit,
					MaxAckPending: 1, FilterSubjects: []string{space}}}
			desired.Consumers[c.Key()] = c
		}
		for i := range consumers {
			c := &model.Consumer{Stream: name, Name: fmt.Sprintf("svc%d", i),
				Config: server.ConsumerConfig{Durable: fmt.Sprintf("svc%d", i), AckPolicy: server.AckExplicit,
					FilterSubject: fmt.Sprintf("*.s%d.*.e%d", s, i)}}
			desired.Consumers[c.Key()] = c
		}
		lc := &model.Consumer{Stream: name, Name: "svc0-4821", State: &model.ConsumerState{},
			Config: server.ConsumerConfig{Durable: "svc0-4821", AckPolicy: server.AckExplicit, MaxAckPending: 1000, MaxWaiting: 512}}
		live.Consumers[lc.Key()] = lc
	}
	return desired, live
}

// BenchmarkCheckInvariants measures the checks on 100 streams with 50 consumers and
// a 16-lane group each (6,600 consumers).
func BenchmarkCheckInvariants(b *testing.B) {
	desired, live := benchModel(100, 50)
	var n int
	for b.Loop() {
		n = len(plan.CheckInvariants(desired, live))
	}
	if n != 100 {
		b.Fatalf("%d findings, want one NP103 per stream", n)
	}
}
