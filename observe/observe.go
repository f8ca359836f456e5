// Package observe reads the live server into model.Model, the type the files are
// decoded into, so plan can diff the two as values.
//
// Every stream and consumer of the account is read with STREAM.LIST and CONSUMER.LIST
// (256 a page), the consumer lists of many streams concurrently (DefaultParallelism),
// each page of streams starting its consumer lists while the next page is read. Configs are kept as
// the server stored them; plan normalises. Objects the server lists but cannot report
// (offline, or missing from a clustered list) are recorded in Model.Offline with
// their address (stream.<NAME> or consumer.<STREAM>.<NAME>) and the reason, and do not
// fail the read.
package observe

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/sync/errgroup"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
)

// DefaultParallelism is how many consumer lists are read at once when Options leaves
// it unset: 64, the raw read floor's best (bench/). BenchmarkRead (1,000 streams x 2
// consumers, the lists started as the stream pages arrive) took 96 ms at 64 against
// 104 ms at 16 in process, and 128 ms against 270 ms through a 1ms round trip; 1 is
// 10-20x slower. The bound keeps one read from queueing more than that on a shared server.
const DefaultParallelism = 64

// Options tune a read.
type Options struct {
	// Parallelism bounds the concurrent CONSUMER.LIST requests; 0 means DefaultParallelism.
	Parallelism int
	// ConsumersOf, when set, limits the consumer lists read to the streams it accepts
	// (status reads only the streams the files declare); nil reads them all.
	ConsumersOf func(stream string) bool
}

// want is ConsumersOf as readAllConsumers takes it.
func (o Options) want() func(*model.Stream) bool {
	if o.ConsumersOf == nil {
		return nil
	}
	return func(s *model.Stream) bool { return o.ConsumersOf(s.Name) }
}

func (o Options) parallelism() int {
	if o.Parallelism > 0 {
		return o.Parallelism
	}
	return DefaultParallelism
}

// Read reads the target and every stream and consumer of the account. The target, the
// STREAM.LIST walk and the consumer lists run at the same time: each page of streams
// starts its streams' consumer lists while the next page is requested.
func Read(ctx context.Context, c *jsapi.Client, o Options) (*model.Model, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := model.New()
	var (
		t    *model.Target
		terr error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		if t, terr = readTarget(ctx, c); terr != nil {
			cancel()
		}
	}()
	err := readStreamsAndConsumers(ctx, c, m, o.parallelism(), o.want())
	<-done
	// The target's error first: it is the one a read that can not start reports (no
	// JetStream, no permission), and it cancelled the rest.
	if terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, err
	}
	m.Target = t
	slices.SortFunc(m.Offline, func(a, b model.Offline) int { return cmp.Compare(a.Address, b.Address) })
	return m, nil
}

// readStreamsAndConsumers pages through STREAM.LIST into m and reads the consumers of
// every stream listed for which want is true (all when want is nil), parallelism at a
// time, starting as the pages arrive.
func readStreamsAndConsumers(ctx context.Context, c *jsapi.Client, m *model.Model, parallelism int, want func(*model.Stream) bool) error {
	g, gctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	names := make(chan string, 1024)
	for range parallelism {
		g.Go(func() error {
			for name := range names {
				if err := readConsumersInto(gctx, c, m, &mu, name); err != nil {
					// Drain, so that the walk is never left blocked on a send.
					for range names {
					}
					return err
				}
			}
			return nil
		})
	}
	err := readStreams(gctx, c, m, &mu, func(s *model.Stream) {
		if want == nil || want(s) {
			names <- s.Name
		}
	})
	close(names)
	// A failed consumer list cancels gctx and so the walk: its error is the cause.
	if werr := g.Wait(); werr != nil {
		return werr
	}
	return err
}

// readStreams pages through STREAM.LIST into m (under mu), calling listed with each
// stream new to the walk once its page is in.
func readStreams(ctx context.Context, c *jsapi.Client, m *model.Model, mu *sync.Mutex, listed func(*model.Stream)) error {
	seen := map[string]bool{}
	for offset := 0; ; {
		page, err := c.ListStreams(ctx, offset)
		if err != nil {
			return fmt.Errorf("observe streams: %w", err)
		}
		fresh := 0
		var added []*model.Stream
		for _, si := range page.Streams {
			if si == nil || seen[si.Config.Name] {
				continue
			}
			seen[si.Config.Name] = true
			fresh++
			added = append(added, toStream(si))
		}
		mu.Lock()
		for _, s := range added {
			m.Streams[s.Name] = s
		}
		fresh += recordMissing(&m.Offline, seen, page.Missing, page.Offline, streamAddress)
		mu.Unlock()
		for _, s := range added {
			listed(s)
		}
		offset += fresh
		// A clustered list reports a stream whose peers are all offline in both
		// streams and missing, so the offset advances by distinct names; a page
		// with nothing new ends the walk rather than looping.
		if offset >= page.Total || fresh == 0 {
			return nil
		}
	}
}

// readAllConsumers reads the consumers of every stream in m for which want is true (all
// when want is nil), a bounded number at a time.
func readAllConsumers(ctx context.Context, c *jsapi.Client, m *model.Model, parallelism int, want func(*model.Stream) bool) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism)
	var mu sync.Mutex
	for _, name := range m.StreamNames() {
		if want != nil && !want(m.Streams[name]) {
			continue
		}
		g.Go(func() error { return readConsumersInto(gctx, c, m, &mu, name) })
	}
	return g.Wait()
}

// readConsumersInto reads the consumers of one stream into m, under mu.
func readConsumersInto(ctx context.Context, c *jsapi.Client, m *model.Model, mu *sync.Mutex, name string) error {
	cons, offline, gone, err := readConsumers(ctx, c, name)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if gone {
		// Deleted between the stream list and its consumer list: it is absent.
		delete(m.Streams, name)
		return nil
	}
	for _, cn := range cons {
		m.Consumers[cn.Key()] = cn
	}
	m.Offline = append(m.Offline, offline...)
	return nil
}

// readConsumers pages through CONSUMER.LIST of one stream. gone reports that the
// stream no longer exists.
func readConsumers(ctx context.Context, c *jsapi.Client, stream string) (cons []*model.Consumer, offline []model.Offline, gone bool, err error) {
	seen := map[string]bool{}
	for offset := 0; ; {
		page, err := c.ListConsumers(ctx, stream, offset)
		if jsapi.IsNotFound(err) {
			return nil, nil, true, nil
		}
		if err != nil {
			return nil, nil, false, fmt.Errorf("observe consumers of %s: %w", stream, err)
		}
		fresh := 0
		for _, ci := range page.Consumers {
			if ci == nil || ci.Config == nil {
				continue
			}
			cn := toConsumer(stream, ci)
			if cn.Name == "" || seen[cn.Name] {
				continue
			}
			seen[cn.Name] = true
			fresh++
			cons = append(cons, cn)
		}
		fresh += recordMissing(&offline, seen, page.Missing, page.Offline, func(n string) string { return consumerAddress(stream, n) })
		offset += fresh
		if offset >= page.Total || fresh == 0 {
			return cons, offline, false, nil
		}
	}
}

// recordMissing appends the listed-but-unreported names to out and returns how many
// of them were not seen before on this walk.
func recordMissing(out *[]model.Offline, seen map[string]bool, missing []string, offline map[string]string, address func(string) string) int {
	names := map[string]bool{}
	for _, n := range missing {
		names[n] = true
	}
	for n := range offline {
		names[n] = true
	}
	fresh := 0
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if !seen[n] {
			fresh++
		}
		seen[n] = true
		reason := offline[n]
		if reason == "" {
			reason = "no response from the servers that hold it"
		}
		*out = append(*out, model.Offline{Address: address(n), Reason: reason})
	}
	return fresh
}

func streamAddress(name string) string { return "stream." + name }

func consumerAddress(stream, name string) string { return "consumer." + stream + "." + name }

// toStream converts a stream's info into the model, keeping the config as stored.
func toStream(si *server.StreamInfo) *model.Stream {
	cfg := si.Config
	cfg.Metadata = stripResponseMeta(cfg.Metadata)
	kind, bucket := classify(&cfg)
	st := &model.StreamState{
		Msgs:        si.State.Msgs,
		Bytes:       si.State.Bytes,
		FirstSeq:    si.State.FirstSeq,
		LastSeq:     si.State.LastSeq,
		FirstTime:   si.State.FirstTime.UTC(),
		LastTime:    si.State.LastTime.UTC(),
		NumSubjects: si.State.NumSubjects,
		Consumers:   si.State.Consumers,
		Created:     si.Created.UTC(),
		ReadAt:      si.TimeStamp.UTC(),
	}
	if si.Cluster != nil {
		st.Cluster, st.Leader = si.Cluster.Name, si.Cluster.Leader
	}
	return &model.Stream{Name: cfg.Name, Kind: kind, Bucket: bucket, Config: cfg, State: st}
}

// toConsumer converts the info of a consumer of stream into the model, keeping the
// config as stored. A clustered list reports a consumer whose peers are all offline
// with its config only, so the names fall back to the stream asked about and the config.
func toConsumer(stream string, ci *server.ConsumerInfo) *model.Consumer {
	cfg := *ci.Config
	cfg.Metadata = stripResponseMeta(cfg.Metadata)
	name := cmp.Or(ci.Name, cfg.Name, cfg.Durable)
	return &model.Consumer{
		Stream: cmp.Or(ci.Stream, stream),
		Name:   name,
		Config: cfg,
		State: &model.ConsumerState{
			NumPending:     ci.NumPending,
			NumAckPending:  ci.NumAckPending,
			NumRedelivered: ci.NumRedelivered,
			NumWaiting:     ci.NumWaiting,
			Created:        ci.Created.UTC(),
			Delivered:      seqState(ci.Delivered),
			AckFloor:       seqState(ci.AckFloor),
			PushBound:      ci.PushBound,
			Paused:         ci.Paused,
		},
	}
}

func seqState(s server.SequenceInfo) model.SeqState {
	out := model.SeqState{Consumer: s.Consumer, Stream: s.Stream}
	if s.Last != nil {
		out.Last = s.Last.UTC()
	}
	return out
}

// stripResponseMeta drops _nats.ver and _nats.level: the server adds them to INFO and
// create replies but never stores them (LIST replies leave them out), so dropping them
// makes a config read by Read and by ReadObjects the same value. md is the map of a
// reply just decoded, which nothing else holds, so the keys are deleted in place: a
// copy of every object's metadata was an eighth of a large plan's live heap.
func stripResponseMeta(md map[string]string) map[string]string {
	delete(md, "_nats.ver")
	delete(md, "_nats.level")
	if len(md) == 0 {
		return nil
	}
	return md
}
