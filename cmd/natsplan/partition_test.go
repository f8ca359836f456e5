package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/subject"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// TestValidateInvalidExamples runs natsplan validate on every config under
// examples/invalid (they belong to the consumer-groups work, whose rules they show):
// exit 1 with the code at the marked file:line when a marker says ERROR, exit 0 with
// the warning printed when it says WARNING. NP204 needs the live server and is left
// to plan.
func TestValidateInvalidExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/invalid/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	marker := regexp.MustCompile(`#\s*(ERROR|WARNING):\s*(NP\d{3})`)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			wantCode := 0
			var wants []string
			for i, line := range strings.Split(string(b), "\n") {
				m := marker.FindStringSubmatch(line)
				if m == nil || finding.Code(m[2]) == finding.CodeRepartition {
					continue
				}
				if m[1] == "ERROR" {
					wantCode = 1
				}
				wants = append(wants, fmt.Sprintf("%s:%d:", file, i+1), strings.ToLower(m[1])+" "+m[2])
			}
			code, out, errOut := offlineCLI(t, "validate", file)
			if code != wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", code, wantCode, out, errOut)
			}
			for _, w := range wants {
				if !strings.Contains(errOut, w) {
					t.Fatalf("stderr does not say %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// partitionCLI runs `natsplan partition ARGS...` in-process.
func partitionCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return offlineCLI(t, append([]string{"partition"}, args...)...)
}

// offlineCLI runs natsplan in-process with no server, registering the partition
// command on the root when root.go does not yet.
func offlineCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(string) string { return "" }, nil)
	root := newCmdRoot(f)
	if c, _, err := root.Find([]string{"partition"}); err != nil || c == root {
		root.AddCommand(newCmdPartition(f))
	}
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	code, msg := exitCodeOf(root.ExecuteContext(context.Background()))
	if msg != nil {
		fmt.Fprintf(&errOut, "Error: %s\n", msg)
	}
	return code, out.String(), errOut.String()
}

const partitionExample = "../../examples/orders"

// TestPartitionAgreesWithServer publishes 500 random subjects into the orders example's
// stream, as created from its files, and checks that `natsplan partition` prints the
// partition and stored subject the server really stored each one under.
func TestPartitionAgreesWithServer(t *testing.T) {
	const n = 500
	m, diags := schema.Load([]string{partitionExample}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, _ := json.Marshal(plan.NormalizeStream(m.Streams["ORDERS"].Config, nil))
	if _, err := jsapi.New(nc, "", 5*time.Second).CreateStream(ctx, "ORDERS", cfg); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 5))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:@"
	token := func() string {
		b := make([]byte, 1+r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for i := range n {
		subj := fmt.Sprintf("orders.%s.%s", token(), token())
		if _, err := js.PublishAsync(subj, []byte(subj)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	<-js.PublishAsyncComplete()
	oc, err := js.OrderedConsumer(ctx, "ORDERS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for checked < n {
		batch, err := oc.Fetch(n-checked, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			published, stored := string(msg.Data()), msg.Subject()
			code, out, errOut := partitionCLI(t, published, partitionExample, "--format", "json")
			var res partitionResult
			if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
				t.Fatalf("partition %s: exit %d, %q %q", published, code, out, errOut)
			}
			if res.StoredSubject != stored || !strings.HasPrefix(stored, strconv.Itoa(res.Partition)+".") ||
				res.Subject != published || res.Mapping != "orders_by_customer" {
				t.Fatalf("natsplan says %+v; the server stored %s as %s", res, published, stored)
			}
		}
		if got == 0 {
			t.Fatalf("read %d of %d stored messages", checked, n)
		}
		checked += got
	}
}

func TestPartitionCommand(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.hcl")
	if err := os.WriteFile(two, []byte(`
natsplan { project = "p" }
stream "A" {
  subjects = ["a.>"]
}
stream "B" {
  subjects = ["b.>"]
}
subject_mapping "ma" {
  stream     = "A"
  source     = "a.*.*"
  partitions = 4
  key        = [2]
}
subject_mapping "mb" {
  stream     = "B"
  source     = "b.*"
  partitions = 3
  key        = [1]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none.hcl")
	if err := os.WriteFile(none, []byte("natsplan { project = \"p\" }\nstream \"A\" {\n  subjects = [\"a.>\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := subject.Partition("a.*.*", "a.x.y", 4, 2)
	cases := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		stderr  string
		exactly bool
	}{
		{name: "one mapping, text", args: []string{"orders.acme.created", partitionExample}, code: 0, stdout: "7\n", exactly: true},
		{name: "chosen mapping", args: []string{"a.x.y", two, "--mapping", "ma"}, code: 0, stdout: fmt.Sprintf("%d\n", want), exactly: true},
		{name: "json", args: []string{"orders.acme.created", partitionExample, "--format", "json"}, code: 0,
			stdout: "{\n  \"subject\": \"orders.acme.created\",\n  \"mapping\": \"orders_by_customer\",\n  \"partition\": 7,\n  \"stored_subject\": \"7.orders.acme.created\"\n}\n", exactly: true},
		{name: "several mappings need --mapping", args: []string{"a.x.y", two}, code: 1, stderr: "choose one with --mapping"},
		{name: "unknown mapping", args: []string{"a.x.y", two, "--mapping", "mc"}, code: 1, stderr: "use one of ma, mb"},
		{name: "no mapping", args: []string{"a.x.y", none}, code: 1, stderr: "declare no subject_mapping"},
		{name: "subject outside the source", args: []string{"orders.acme", partitionExample}, code: 1, stderr: "does not match the source"},
		{name: "wildcard subject", args: []string{"orders.*.created", partitionExample}, code: 1, stderr: "literal subject"},
		{name: "bad format", args: []string{"orders.acme.created", partitionExample, "--format", "yaml"}, code: 1, stderr: "unknown --format"},
		{name: "no subject", args: nil, code: 1, stderr: "requires at least 1 arg"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := partitionCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, errOut)
			}
			if tc.exactly && out != tc.stdout {
				t.Fatalf("stdout %q, want %q", out, tc.stdout)
			}
			if tc.code != 0 && out != "" {
				t.Fatalf("a failure printed %q on stdout", out)
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("stderr %q, want it to say %q", errOut, tc.stderr)
			}
		})
	}
}
