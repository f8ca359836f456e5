package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

const shopProject = `
natsplan {
  project = "shop"
}
`

// stored is every stream's config and message count and every consumer's config, so
// that two snapshots are equal exactly when nothing was written or deleted in between.
func stored(t *testing.T, js jetstream.JetStream) map[string]string {
	t.Helper()
	state := serverState(t, js)
	for si := range js.ListStreams(context.Background()).Info() {
		state["messages "+si.Config.Name] = fmt.Sprint(si.State.Msgs)
	}
	return state
}

func publish(t *testing.T, js jetstream.JetStream, subject string, n int) {
	t.Helper()
	for i := range n {
		if _, err := js.Publish(context.Background(), subject, fmt.Appendf(nil, "message %d of %s", i, strings.Repeat("x", 64))); err != nil {
			t.Fatal(err)
		}
	}
}

func streamInfo(t *testing.T, js jetstream.JetStream, name string) *jetstream.StreamInfo {
	t.Helper()
	st, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestDataLossNeedsTheFlag: every change the server accepts but that deletes stored
// messages is an NP302 error in the plan; apply without --allow-data-loss is refused and
// changes nothing, with it the change is made. Changes the stored state proves harmless
// need no flag.
func TestDataLossNeedsTheFlag(t *testing.T) {
	msgs := func(name string, want uint64) func(*testing.T, jetstream.JetStream) {
		return func(t *testing.T, js jetstream.JetStream) {
			if got := streamInfo(t, js, name).State.Msgs; got != want {
				t.Errorf("%s holds %d messages after the apply, want %d", name, got, want)
			}
		}
	}
	// streamS is stream S on s.> with the attributes given, one "name = value" each.
	streamS := func(attrs ...string) string {
		out := "stream \"S\" {\n  subjects = [\"s.>\"]\n"
		for _, a := range attrs {
			out += "  " + a + "\n"
		}
		return out + "}\n"
	}
	const interestI = "stream \"I\" {\n  subjects  = [\"i.>\"]\n  retention = \"interest\"\n}\n"
	// consumerC is consumer I/c with explicit acks and the attributes given.
	consumerC := func(attrs ...string) string {
		out := "consumer \"I\" \"c\" {\n  ack_policy = \"explicit\"\n"
		for _, a := range attrs {
			out += "  " + a + "\n"
		}
		return out + "}\n"
	}
	fill := func(subject string, n int) func(*testing.T, jetstream.JetStream) {
		return func(t *testing.T, js jetstream.JetStream) { publish(t, js, subject, n) }
	}
	for _, tc := range []struct {
		name       string
		base, next string
		seed       func(*testing.T, jetstream.JetStream)
		lossy      bool
		after      func(*testing.T, jetstream.JetStream)
	}{
		{name: "first max_age on a stream holding messages",
			base: streamS(), next: streamS(`max_age = "1s"`),
			seed: fill("s.a", 50), lossy: true,
			after: func(t *testing.T, js jetstream.JetStream) {
				if got := streamInfo(t, js, "S").Config.MaxAge; got != time.Second {
					t.Errorf("max_age %v after the apply, want 1s", got)
				}
			}},
		{name: "first max_age above the oldest message's age",
			base: streamS(), next: streamS(`max_age = "1h"`),
			seed: fill("s.a", 50), after: msgs("S", 50)},
		{name: "max_msgs below what is stored",
			base: streamS(), next: streamS(`max_msgs = 5`),
			seed: fill("s.a", 10), lossy: true, after: msgs("S", 5)},
		{name: "max_msgs lowered, still above what is stored",
			base: streamS(`max_msgs = 100`), next: streamS(`max_msgs = 20`),
			seed: fill("s.a", 10), after: msgs("S", 10)},
		{name: "max_bytes below what is stored",
			base: streamS(), next: streamS(`max_bytes = 500`),
			seed: fill("s.a", 10), lossy: true,
			after: func(t *testing.T, js jetstream.JetStream) {
				if st := streamInfo(t, js, "S").State; st.Bytes > 500 || st.Msgs == 10 {
					t.Errorf("%d messages, %d bytes after the apply, want at most 500 bytes", st.Msgs, st.Bytes)
				}
			}},
		{name: "max_msgs_per_subject below what subjects hold",
			base: streamS(), next: streamS(`max_msgs_per_subject = 1`),
			seed:  func(t *testing.T, js jetstream.JetStream) { publish(t, js, "s.a", 5); publish(t, js, "s.b", 5) },
			lossy: true, after: msgs("S", 2)},
		{name: "KV history lowered",
			base: `kv "cfg" { history = 5 }`, next: `kv "cfg" { history = 1 }`,
			seed: func(t *testing.T, js jetstream.JetStream) {
				kv, err := js.KeyValue(context.Background(), "cfg")
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					if _, err := kv.Put(context.Background(), "k", fmt.Appendf(nil, "v%d", i)); err != nil {
						t.Fatal(err)
					}
				}
			},
			lossy: true, after: msgs("KV_cfg", 1)},
		{name: "retention limits to interest without consumers",
			base: streamS(), next: streamS(`retention = "interest"`),
			seed: fill("s.a", 5), lossy: true, after: msgs("S", 0)},
		{name: "narrowing a consumer filter on an interest stream",
			base: interestI + consumerC(`filter_subject = "i.>"`), next: interestI + consumerC(`filter_subject = "i.a"`),
			seed:  func(t *testing.T, js jetstream.JetStream) { publish(t, js, "i.a", 5); publish(t, js, "i.b", 5) },
			lossy: true, after: msgs("I", 5)},
		{name: "deleting the last consumer of an interest stream",
			base: interestI + consumerC(), next: interestI,
			seed: fill("i.a", 5), lossy: true, after: msgs("I", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			url := s.ClientURL()
			js := jetStream(t, s)
			mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": shopProject + tc.base}))
			tc.seed(t, js)
			next := writeConfig(t, map[string]string{"shop.hcl": shopProject + tc.next})

			code, p := planJSON(t, url, next)
			var np302 []string
			for _, f := range p.Findings {
				if f.Code == "NP302" {
					np302 = append(np302, f.Message)
					// A consumer no longer declared has no attribute to point at.
					if f.Severity != finding.SevError || f.Overridable != finding.OverrideDataLoss || (f.Range == "") != (changeOf(p, f.Address).Action == plan.ActDelete) {
						t.Errorf("NP302 %+v: want an error --allow-data-loss accepts, at the attribute", f)
					}
				}
			}
			if !tc.lossy {
				if code != exitChanges || len(p.Findings) != 0 {
					t.Fatalf("plan: exit %d, findings %+v; want changes and no finding", code, p.Findings)
				}
				mustCLI(t, url, "apply", "--auto-approve", "--allow-delete", next)
				tc.after(t, js)
				return
			}
			if code != exitError || len(np302) != 1 {
				t.Fatalf("plan: exit %d, NP302 %q; want exit 1 with one NP302", code, np302)
			}
			t.Logf("NP302: %s", np302[0])

			before := stored(t, js)
			code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-delete", next)
			if code != exitError || !strings.Contains(out+errOut, "NP302") || !strings.Contains(out+errOut, "--allow-data-loss") {
				t.Fatalf("apply without --allow-data-loss: exit %d, want 1 naming NP302 and the flag\n%s\n%s", code, out, errOut)
			}
			if d := cmp.Diff(before, stored(t, js)); d != "" {
				t.Fatalf("a refused apply changed the server (-before +after):\n%s", d)
			}
			mustCLI(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", next)
			tc.after(t, js)
		})
	}
}

// TestStreamDeleteListsForeignConsumers: deleting an owned stream lists the consumers
// other tools made on it, as not owned, and needs --allow-data-loss for them.
func TestStreamDeleteListsForeignConsumers(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": shopProject + `
stream "MINE" {
  subjects = ["mine.>"]
}
consumer "MINE" "ours" {
  ack_policy = "explicit"
}
stream "KEEP" {
  subjects = ["keep.>"]
}
`}))
	ctx := context.Background()
	if _, err := js.CreateOrUpdateConsumer(ctx, "MINE", jetstream.ConsumerConfig{Durable: "foreign", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	without := writeConfig(t, map[string]string{"shop.hcl": shopProject + `
stream "KEEP" {
  subjects = ["keep.>"]
}
`})
	code, p := planJSON(t, url, without)
	if code != exitError {
		t.Fatalf("plan: exit %d, want 1", code)
	}
	for addr, reason := range map[string]string{
		"consumer.MINE.foreign": "not owned by this project",
		"consumer.MINE.ours":    "its stream is deleted too",
		"stream.MINE":           "no longer declared",
	} {
		ch := changeOf(p, addr)
		if ch == nil || ch.Action != plan.ActDelete || !strings.Contains(ch.Reason, reason) {
			t.Errorf("%s: want a delete saying %q, got %+v", addr, reason, ch)
		}
	}
	if got := codes(p.Findings); !cmp.Equal(got, []string{"NP302 consumer.MINE.foreign"}) {
		t.Errorf("findings %v, want NP302 for the foreign consumer", got)
	}
	if ch := changeOf(p, "consumer.MINE.foreign"); ch == nil || !ch.Destructive {
		t.Errorf("the foreign consumer's delete is not destructive: %+v", ch)
	}
	_, text, _ := cli(t, url, "plan", without)
	if !strings.Contains(text, "consumer.MINE.foreign") || !strings.Contains(text, "not owned by this project") {
		t.Errorf("the text plan does not list the foreign consumer as not owned:\n%s", text)
	}

	before := stored(t, js)
	code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-delete", without)
	if code != exitError || !strings.Contains(out+errOut, "consumer.MINE.foreign") {
		t.Fatalf("apply --allow-delete: exit %d, want 1 naming the foreign consumer\n%s\n%s", code, out, errOut)
	}
	if d := cmp.Diff(before, stored(t, js)); d != "" {
		t.Fatalf("a refused apply changed the server (-before +after):\n%s", d)
	}
	mustCLI(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", without)
	if _, err := js.Stream(ctx, "MINE"); err == nil {
		t.Fatal("MINE was not deleted")
	}
}

func codes(fs []*finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Code)+" "+f.Address)
	}
	return out
}

// TestSavedPlanJudgedAtApply: a saved plan is judged against the server's state when it
// is applied: a stream that was empty when planned and holds messages now, or that got a
// consumer the plan does not list, is not deleted without the flag that allows it.
func TestSavedPlanJudgedAtApply(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": shopProject + `
stream "OLD" {
  subjects = ["old.>"]
}
stream "KEEP" {
  subjects = ["keep.>"]
}
`}))
	without := writeConfig(t, map[string]string{"shop.hcl": shopProject + `
stream "KEEP" {
  subjects = ["keep.>"]
}
`})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if code, out, errOut := cli(t, url, "plan", "--out", planFile, without); code != 0 {
		t.Fatalf("plan of an empty stream's delete: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	publish(t, js, "old.a", 10)

	before := stored(t, js)
	code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-delete", planFile)
	if code != exitError || !strings.Contains(errOut, "NP301 stream.OLD") || !strings.Contains(errOut, "10 messages") ||
		!strings.Contains(errOut, "the plan did not show it") {
		t.Fatalf("apply of the saved plan: exit %d, want 1 naming NP301 stream.OLD and its 10 messages\n%s\n%s", code, out, errOut)
	}
	if d := cmp.Diff(before, stored(t, js)); d != "" {
		t.Fatalf("a refused apply changed the server (-before +after):\n%s", d)
	}

	// A consumer that appeared since would go with the stream unlisted: no flag allows that.
	if _, err := js.CreateOrUpdateConsumer(context.Background(), "OLD", jetstream.ConsumerConfig{Durable: "late", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", planFile)
	if code != exitError || !strings.Contains(errOut, "consumer.OLD.late exists on the server but is not in the plan") {
		t.Fatalf("apply with a consumer the plan does not list: exit %d, want 1 naming it\n%s\n%s", code, out, errOut)
	}
	if err := js.DeleteConsumer(context.Background(), "OLD", "late"); err != nil {
		t.Fatal(err)
	}

	mustCLI(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", planFile)
	if _, err := js.Stream(context.Background(), "OLD"); err == nil {
		t.Fatal("OLD was not deleted with --allow-data-loss")
	}
}

// TestMetadataCaseVariants: prevent_destroy is read exactly; any other spelling of it is
// an error that names the object, the key and the value, and the object is not deleted.
func TestMetadataCaseVariants(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	dir := writeConfig(t, map[string]string{"shop.hcl": shopProject + `
stream "KEEP" {
  subjects = ["keep.>"]
}
`})
	for i, tc := range []struct {
		key, value string
		deleted    bool
	}{
		{"natsplan.prevent_destroy", "TRUE", false},
		{"natsplan.prevent_destroy", "True", false},
		{"natsplan.prevent_destroy", "1", false},
		{"natsplan.PREVENT_DESTROY", "true", false},
		{"natsplan.prevent_destroy", "true", false},
		{"natsplan.prevent_destroy", "false", true},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			name := fmt.Sprintf("OLD%d", i)
			if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{fmt.Sprintf("old%d.>", i)},
				Metadata: map[string]string{"natsplan.project": "shop", tc.key: tc.value}}); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli(t, url, "plan", dir)
			want := []string{"NP407", "stream." + name, tc.key, fmt.Sprintf("%q", tc.value)}
			if tc.value == "true" && tc.key == "natsplan.prevent_destroy" {
				want = []string{"NP405", "stream." + name}
			}
			if tc.deleted {
				if code != 0 || !strings.Contains(out, "- stream."+name) {
					t.Fatalf("plan: exit %d, want 0 with the delete\n%s\n%s", code, out, errOut)
				}
				mustCLI(t, url, "apply", "--auto-approve", "--allow-delete", dir)
				return
			}
			for _, w := range want {
				if code != exitError || !strings.Contains(out, w) {
					t.Fatalf("plan: exit %d, want 1 naming %q\n%s\n%s", code, w, out, errOut)
				}
			}
			if code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", dir); code != exitError {
				t.Fatalf("apply: exit %d, want 1\n%s\n%s", code, out, errOut)
			}
			if _, err := js.Stream(context.Background(), name); err != nil {
				t.Fatalf("%s was deleted: %v", name, err)
			}
			if err := js.DeleteStream(context.Background(), name); err != nil {
				t.Fatal(err)
			}
		})
	}
}
