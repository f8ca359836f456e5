package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/internal/testsrv"
)

const lockStreams = 5

// lockedConfig declares lockStreams streams with a consumer each, all with maxAge, in
// a project whose applies take the lock.
func lockedConfig(maxAge string) string {
	var b strings.Builder
	b.WriteString("natsplan {\n  project = \"shop\"\n  lock {\n    ttl = \"2s\"\n  }\n}\n")
	for i := range lockStreams {
		fmt.Fprintf(&b, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n  max_age  = %q\n}\n", i, i, maxAge)
		fmt.Fprintf(&b, "consumer \"S%d\" \"c\" {\n  ack_policy = \"explicit\"\n}\n", i)
	}
	return b.String()
}

// recorder keeps, in the order the server routed them, every JetStream API request
// and every write to the lock's key. One channel for both subscriptions keeps that
// order: nats.go delivers channel subscriptions from its read loop.
type recorder struct {
	nc   *nats.Conn
	ch   chan *nats.Msg
	msgs []*nats.Msg
}

func record(t *testing.T, nc *nats.Conn, subjects ...string) *recorder {
	t.Helper()
	r := &recorder{nc: nc, ch: make(chan *nats.Msg, 1<<16)}
	for _, s := range subjects {
		if _, err := nc.ChanSubscribe(s, r.ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// events returns everything recorded so far; the flush is a barrier behind every
// message the server routed before it.
func (r *recorder) events(t *testing.T) []*nats.Msg {
	t.Helper()
	if err := r.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case m := <-r.ch:
			r.msgs = append(r.msgs, m)
		default:
			return r.msgs
		}
	}
}

// apiWrite reports whether m is a JetStream API request that changes a stream or
// consumer, other than the lock's own bucket (where waiters watch the key).
func apiWrite(m *nats.Msg) bool {
	if strings.Contains(m.Subject, ".KV_"+lock.DefaultBucket) {
		return false
	}
	for _, op := range []string{"STREAM.CREATE.", "STREAM.UPDATE.", "STREAM.DELETE.", "CONSUMER.CREATE.", "CONSUMER.DURABLE.CREATE.", "CONSUMER.DELETE."} {
		if strings.HasPrefix(m.Subject, "$JS.API."+op) {
			return strings.HasPrefix(m.Reply, nats.InboxPrefix)
		}
	}
	return false
}

// sender names the connection that sent a request: nats.go answers every request of
// one connection on one inbox prefix.
func sender(m *nats.Msg) string {
	parts := strings.SplitN(m.Reply, ".", 3)
	return strings.Join(parts[:2], ".")
}

// lockCreate reports whether m is an attempt to take the lease (a create on the key).
func lockCreate(m *nats.Msg) bool {
	return strings.HasPrefix(m.Subject, "$KV.") && m.Header.Get(jetstream.ExpectedLastSubjSeqHeader) == "0"
}

// TestLockSerialisesApplies: two applies of one project started together while the
// test holds the lock both wait; then one applies, releases, and the other applies
// after it. The requests the server saw prove the write windows do not overlap, and
// the final state is the second apply's configuration.
func TestLockSerialisesApplies(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	ctx := context.Background()
	nc := testsrv.Connect(t, s)
	js := jetStream(t, s)
	held, err := lock.Acquire(ctx, nc, "shop", lock.Options{Holder: "test-holder", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t, testsrv.Connect(t, s), "$JS.API.>", "$KV."+lock.DefaultBucket+".>")

	configs := map[string]string{"1h": lockedConfig("1h"), "2h": lockedConfig("2h")}
	type result struct {
		code        int
		out, errOut string
	}
	results := map[string]*result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for age, src := range configs {
		dir := writeConfig(t, map[string]string{"shop.hcl": src})
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errOut := cli(t, url, "apply", "--auto-approve", "--lock-timeout", "30s", dir)
			mu.Lock()
			results[age] = &result{code, out, errOut}
			mu.Unlock()
		}()
	}

	// Both applies try to take the lease (each from its own connection) while the test
	// holds it; then it is released.
	deadline := time.Now().Add(20 * time.Second)
	for {
		waiters := map[string]bool{}
		for _, m := range rec.events(t) {
			if lockCreate(m) {
				waiters[sender(m)] = true
			}
		}
		if len(waiters) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the 2 applies tried to take the lock", len(waiters))
		}
		time.Sleep(20 * time.Millisecond)
	}
	released := len(rec.events(t))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	for age, r := range results {
		if r.code != 0 {
			t.Fatalf("apply (max_age %s): exit %d\n%s\n%s", age, r.code, r.out, r.errOut)
		}
		if !strings.Contains(r.errOut, "Taking the apply lock of project shop") {
			t.Errorf("apply (max_age %s) does not say it takes the lock\n%s", age, r.errOut)
		}
	}

	// Group the writes by connection, in the order the server routed them.
	events := rec.events(t)
	type window struct {
		first, last int
		ages        map[string]bool
		ops         map[string]int
	}
	windows := map[string]*window{}
	var order []string
	for i, m := range events {
		if !apiWrite(m) {
			continue
		}
		if i < released {
			t.Fatalf("%s was sent while the test held the lock", m.Subject)
		}
		who := sender(m)
		w := windows[who]
		if w == nil {
			w = &window{first: i, ages: map[string]bool{}, ops: map[string]int{}}
			windows[who] = w
			order = append(order, who)
		}
		w.last = i
		op := strings.Join(strings.Split(m.Subject, ".")[2:4], ".")
		w.ops[op]++
		var cfg struct {
			MaxAge time.Duration `json:"max_age"`
		}
		if strings.HasPrefix(op, "STREAM.") && json.Unmarshal(m.Data, &cfg) == nil {
			w.ages[cfg.MaxAge.String()] = true
		}
	}
	if len(order) != 2 {
		t.Fatalf("writes came from %d connections, want the 2 applies", len(order))
	}
	first, second := windows[order[0]], windows[order[1]]
	if first.last > second.first {
		t.Fatalf("the applies' writes interleave: first %d..%d, second %d..%d", first.first, first.last, second.first, second.last)
	}
	// The lease changed hands between the two windows: the first released it, the
	// second took it.
	handover := false
	for _, m := range events[first.last:second.first] {
		if strings.HasPrefix(m.Subject, "$KV.") && m.Header.Get("KV-Operation") == "DEL" {
			handover = true
		}
	}
	if !handover {
		t.Fatal("no release of the lease between the two applies' writes")
	}
	if first.ops["STREAM.CREATE"] != lockStreams || second.ops["STREAM.UPDATE"] != lockStreams || second.ops["STREAM.CREATE"] != 0 {
		t.Fatalf("the first apply should create %d streams and the second update them: %v then %v", lockStreams, first.ops, second.ops)
	}
	if len(first.ages) != 1 || len(second.ages) != 1 {
		t.Fatalf("each apply should write one configuration: %v then %v", first.ages, second.ages)
	}
	var last string
	for age := range second.ages {
		last = strings.TrimSuffix(age, "0m0s")
	}
	for i := range lockStreams {
		st, err := js.Stream(ctx, fmt.Sprintf("S%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(st.CachedInfo().Config.MaxAge.String(), "0m0s"); got != last {
			t.Fatalf("S%d max_age = %s, want %s (the second apply's)", i, got, last)
		}
	}
	dir := writeConfig(t, map[string]string{"shop.hcl": configs[last]})
	if code, out, errOut := cli(t, url, "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("plan of the last applied configuration: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
}

// TestLockHeld: an apply (of the files or of a plan saved from them) that can not get
// the lock within --lock-timeout fails naming the holder and writes nothing; a lease
// nobody refreshes (its holder crashed) is taken over after its ttl.
func TestLockHeld(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	ctx := context.Background()
	nc := testsrv.Connect(t, s)
	js := jetStream(t, s)
	dir := writeConfig(t, map[string]string{"shop.hcl": lockedConfig("1h")})

	held, err := lock.Acquire(ctx, nc, "shop", lock.Options{Holder: "ci@runner-7 pid 4242", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, url, "plan", "--out", planFile, dir)
	rec := record(t, testsrv.Connect(t, s), "$JS.API.>")
	// The configuration asks for the lock, and so does the plan saved from it.
	for _, target := range []string{dir, planFile} {
		code, out, errOut := cli(t, url, "apply", "--auto-approve", "--lock-timeout", "300ms", target)
		if code != exitError || !strings.Contains(errOut, "is held by ci@runner-7 pid 4242") || !strings.Contains(errOut, "--lock-timeout") {
			t.Fatalf("apply %s with the lock held: exit %d, want 1 naming the holder\n%s\n%s", filepath.Base(target), code, out, errOut)
		}
	}
	for _, m := range rec.events(t) {
		if apiWrite(m) {
			t.Fatalf("an apply that did not get the lock sent %s", m.Subject)
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A crashed holder: its lease is written once and never refreshed.
	kv, err := js.KeyValue(ctx, lock.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "shop", []byte(`{"holder":"crashed pid 1"}`)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, url, "apply", "--auto-approve", "--lock-timeout", "20s", planFile)
	if code != 0 || !strings.Contains(out, "Apply complete") {
		t.Fatalf("apply after the crashed holder's ttl: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if _, err := kv.Get(ctx, "shop"); err == nil {
		t.Fatal("the apply left its lease behind")
	}
}

// TestFailedReleaseIsReported: a release that fails leaves the lock held until its ttl
// runs out, which the next apply waits for; apply says so on stderr instead of dropping
// the error.
func TestFailedReleaseIsReported(t *testing.T) {
	t.Parallel()
	s := testsrv.Start(t)
	ctx := context.Background()
	held, err := lock.Acquire(ctx, testsrv.Connect(t, s), "shop", lock.Options{Holder: "test", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The bucket is gone, so the release's delete can not be stored.
	if err := jetStream(t, s).DeleteKeyValue(ctx, lock.DefaultBucket); err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	f := newFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut}, func(string) string { return "" }, nil)
	f.release(ctx, held)
	if got := errOut.String(); !strings.Contains(got, "apply lock: release") || !strings.Contains(got, "stays held until its ttl (2s) runs out") {
		t.Errorf("stderr after a failed release:\n%s", got)
	}
}
