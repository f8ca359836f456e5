package subject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// randomToken returns a subject token of 1..12 characters, including the punctuation
// and non-ASCII characters real keys carry.
func randomToken(r *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:=@#éü"
	runes := []rune(alphabet)
	n := 1 + r.IntN(12)
	var b strings.Builder
	for range n {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// randomSubject fills the wildcards of src with random tokens (1..3 tokens for `>`).
func randomSubject(r *rand.Rand, src string) string {
	var out []string
	for _, t := range strings.Split(src, ".") {
		switch t {
		case "*":
			out = append(out, randomToken(r))
		case ">":
			for range 1 + r.IntN(3) {
				out = append(out, randomToken(r))
			}
		default:
			out = append(out, t)
		}
	}
	return strings.Join(out, ".")
}

// TestPartitionMatchesServer publishes random subjects into streams carrying partition
// transforms and checks that Partition, Space and PartitionOf agree with the subject
// the server really stored, for every message.
func TestPartitionMatchesServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		src   string
		n     int
		key   []int
		dest  string
		count int
	}{
		{name: "one key token", src: "orders.*.*", n: 8, key: []int{1}, count: 500},
		{name: "two key tokens reversed", src: "pay.*.*.*", n: 5, key: []int{3, 1}, count: 150},
		{name: "whole subject", src: "ev.*", n: 7, count: 150},
		{name: "trailing fwc", src: "logs.*.>", n: 3, key: []int{1}, count: 150},
		{name: "partition not first", src: "m.*.*", n: 4, key: []int{2}, dest: "m.{{wildcard(1)}}.{{ partition(4, 2) }}.{{wildcard(2)}}", count: 100},
	}
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	api := jsapi.New(nc, "", 5*time.Second)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := rand.New(rand.NewPCG(3, 1))
	total := 0
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pm, merr := ParseMapping(tc.src, tc.dest, tc.n, tc.key)
			if merr != nil {
				t.Fatalf("ParseMapping: %v", merr)
			}
			name := fmt.Sprintf("P%d", i)
			cfg, _ := json.Marshal(server.StreamConfig{Name: name, Subjects: []string{tc.src}, Storage: server.MemoryStorage,
				Retention: server.LimitsPolicy, SubjectTransform: pm.Transform()})
			if _, err := api.CreateStream(ctx, name, cfg); err != nil {
				t.Fatal(err)
			}
			sent := map[string]bool{}
			for len(sent) < tc.count {
				subj := randomSubject(r, tc.src)
				if sent[subj] {
					continue
				}
				sent[subj] = true
				if _, err := js.PublishAsync(subj, []byte(subj)); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				t.Fatal("publish acks not received")
			}
			oc, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for got < tc.count {
				batch, err := oc.Fetch(tc.count-got, jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for m := range batch.Messages() {
					n++
					published, stored := string(m.Data()), m.Subject()
					p, err := Partition(tc.src, published, tc.n, tc.key...)
					if err != nil {
						t.Fatalf("Partition(%q): %v", published, err)
					}
					if lp, ls, err := pm.Locate(published); err != nil || lp != p || ls != stored {
						t.Errorf("Locate(%q) = %d, %q, %v; the server stored %q", published, lp, ls, err, stored)
					}
					if pm.PartitionOf(stored) != p {
						t.Errorf("%s stored as %s: natsplan computes partition %d, stored partition %d", published, stored, p, pm.PartitionOf(stored))
					}
					if !server.SubjectMatchesFilter(stored, pm.Space(p)) {
						t.Errorf("stored %s is outside the space %s of partition %d", stored, pm.Space(p), p)
					}
				}
				if n == 0 {
					t.Fatalf("read %d of %d stored messages", got, tc.count)
				}
				got += n
			}
			total += got
		})
	}
	if total < 500 {
		t.Fatalf("compared %d subjects, want at least 500", total)
	}
}

func TestPartitionErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, subject string
		n                  int
		key                []int
		want               string
	}{
		{"zero partitions", "o.*", "o.a", 0, []int{1}, "at least 1"},
		{"key out of range", "o.*", "o.a", 4, []int{2}, "out of range"},
		{"subject outside source", "o.*", "p.a", 4, []int{1}, "does not match"},
		{"wildcard subject", "o.*", "o.*", 4, []int{1}, "not a valid literal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Partition(tc.src, tc.subject, tc.n, tc.key...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		src, dest string
		n         int
		key       []int
		field     string // "" = valid
		space1    string
	}{
		{name: "default destination", src: "orders.*.*", n: 8, key: []int{1}, space1: "1.orders.*.*"},
		{name: "fwc source", src: "orders.>", n: 2, space1: "1.orders.>"},
		{name: "custom destination", src: "a.*.*", dest: "a.{{partition(3,2)}}.$1.{{wildcard(2)}}", n: 3, key: []int{2}, space1: "a.1.*.*"},
		{name: "literal source", src: "orders.new", n: 4, field: "source"},
		{name: "zero partitions", src: "orders.*", n: 0, key: []int{1}, field: "partitions"},
		{name: "key zero", src: "orders.*", n: 4, key: []int{0}, field: "key"},
		{name: "key beyond wildcards", src: "orders.*", n: 4, key: []int{2}, field: "key"},
		{name: "key twice", src: "orders.*.*", n: 4, key: []int{1, 1}, field: "key"},
		{name: "no partition token", src: "orders.*", dest: "x.{{wildcard(1)}}", n: 4, key: []int{1}, field: "destination"},
		{name: "two partition tokens", src: "orders.*", dest: "{{partition(4,1)}}.{{partition(4,1)}}.{{wildcard(1)}}", n: 4, key: []int{1}, field: "destination"},
		{name: "partition count differs", src: "orders.*", dest: "{{partition(3,1)}}.{{wildcard(1)}}", n: 4, key: []int{1}, field: "destination"},
		{name: "server refuses", src: "orders.*", dest: "{{partition(4,1)}}.{{hash(1)}}", n: 4, key: []int{1}, field: "destination"},
		{name: "multi-token function", src: "orders.*", dest: "{{partition(4,1)}}.{{split(1,-)}}", n: 4, key: []int{1}, field: "destination"},
		{name: "invalid source", src: "orders..x", n: 4, field: "source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pm, merr := ParseMapping(tc.src, tc.dest, tc.n, tc.key)
			if tc.field != "" {
				var me *MappingError
				if !errors.As(merr, &me) || me.Field != tc.field {
					t.Fatalf("got %v, want an error on %s", merr, tc.field)
				}
				return
			}
			if merr != nil {
				t.Fatal(merr)
			}
			if got := pm.Space(1); got != tc.space1 {
				t.Fatalf("Space(1) = %q, want %q", got, tc.space1)
			}
			if lm := LiveMapping(pm.Transform()); lm == nil || lm.Partitions != tc.n {
				t.Fatalf("LiveMapping did not recognise %s", pm.Destination)
			}
		})
	}
}

func TestIntersectAndStoredSpaces(t *testing.T) {
	t.Parallel()
	inter := []struct{ a, b, want string }{
		{"a.*.c", "a.b.*", "a.b.c"},
		{"a.>", "*.b", "a.b"},
		{"a.>", "a.>", "a.>"},
		{"a.*", "b.*", ""},
		{"a.>", "a", ""},
		{"*.orders.*.created", "3.orders.*.*", "3.orders.*.created"},
	}
	for _, c := range inter {
		got, ok := Intersect(c.a, c.b)
		if (c.want == "") == ok || got != c.want {
			t.Errorf("Intersect(%q,%q) = %q,%v want %q", c.a, c.b, got, ok, c.want)
		}
	}
	tr := &server.SubjectTransformConfig{Source: "orders.*.*", Destination: "{{partition(8,1)}}.orders.{{wildcard(1)}}.{{wildcard(2)}}"}
	transformed, passthrough := StoredSpaces([]string{"orders.>", "audit.x"}, tr)
	if strings.Join(transformed, " ") != "*.orders.*.*" || strings.Join(passthrough, " ") != "orders.> audit.x" {
		t.Fatalf("StoredSpaces = %v, %v", transformed, passthrough)
	}
	for f, want := range map[string]bool{
		"*.orders.*.created": true, "3.orders.c1.*": true, "orders.a": true, "orders.x.y.z": true, "audit.x": true,
		"orders.*.created": false, "audit.y": false, "9.orders.*": false,
	} {
		if got := FilterCanMatch(f, []string{"orders.>", "audit.x"}, tr); got != want {
			t.Errorf("FilterCanMatch(%q) = %v, want %v", f, got, want)
		}
	}
	p, _ := Partition("orders.*.*", "orders.c42.x", 8, 1)
	got, _ := StoredSpaces([]string{"orders.c42.*"}, tr)
	if want := fmt.Sprintf("%d.orders.c42.*", p); got[0] != want {
		t.Fatalf("StoredSpaces literal key = %v, want %s", got, want)
	}
}

// FuzzMapping checks that no mapping or subject, however malformed, panics, and that
// Partition agrees with the server's transform whenever both accept the input.
func FuzzMapping(f *testing.F) {
	f.Add("orders.*.*", "", 8, 1, "orders.c1.created")
	f.Add("a.*.>", "{{partition(3,1)}}.a.{{wildcard(1)}}.>", 3, 1, "a.b.c.d")
	f.Add("x.*", "{{partition(2,1)}}.{{split(1,-)}}", 2, 1, "x.a-b")
	f.Add(">", "", 5, 0, "q")
	f.Fuzz(func(t *testing.T, src, dest string, n, k int, subject string) {
		var key []int
		if k != 0 {
			key = []int{k}
		}
		pm, merr := ParseMapping(src, dest, n, key)
		StoredSpaces([]string{src, subject}, &server.SubjectTransformConfig{Source: src, Destination: dest})
		FilterCanMatch(subject, []string{src}, &server.SubjectTransformConfig{Source: src, Destination: dest})
		if merr != nil {
			return
		}
		pm.Spaces()
		p, stored, err := pm.Locate(subject)
		if err != nil {
			return
		}
		if pm.PartitionOf(stored) != p {
			t.Fatalf("%s -> %s: Locate(%q) = %d, %q but PartitionOf says %d", src, pm.Destination, subject, p, stored, pm.PartitionOf(stored))
		}
	})
}
