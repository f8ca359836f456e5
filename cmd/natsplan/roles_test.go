package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/permissions"
)

// permissionsServer starts a server whose users are the roles natsplan permissions
// derives from dir, written into the configuration exactly as --format nats-server
// prints them, plus an unrestricted "admin". Every password is "pw". It returns a URL
// for a user.
func permissionsServer(t *testing.T, dir string, roles ...string) func(user string) string {
	t.Helper()
	var users strings.Builder
	users.WriteString("      { user: admin, password: pw }\n")
	for _, r := range roles {
		code, out, errOut := cli(t, "", "permissions", "--service", r, "--format", "nats-server", dir)
		if code != 0 {
			t.Fatalf("permissions --service %s: exit %d\n%s", r, code, errOut)
		}
		fmt.Fprintf(&users, "      {\n        user: %q, password: pw\n%s      }\n", r, out)
	}
	conf := fmt.Sprintf(`host: "127.0.0.1"
port: -1
jetstream { store_dir: %q }
accounts {
  APP {
    jetstream: enabled
    users: [
%s    ]
  }
}
`, t.TempDir(), users.String())
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("the generated permissions do not load in a server config: %v\n%s", err, conf)
	}
	s := testsrv.StartOptions(t, opts)
	return func(user string) string {
		return strings.Replace(s.ClientURL(), "nats://", "nats://"+user+":pw@", 1)
	}
}

// connectAs connects as user with the service's own inbox prefix.
func connectAs(t *testing.T, url, inbox string) *nats.Conn {
	t.Helper()
	opts := []nats.Option{nats.PermissionErrOnSubscribe(true), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})}
	if inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// refused asserts that the server refuses nc publishing to subject.
func refused(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	if err := nc.Publish(subject, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	last := nc.LastError()
	if last == nil || !strings.Contains(last.Error(), `"`+subject+`"`) {
		t.Errorf("publish to %s was allowed (last error: %v)", subject, last)
	}
}

// refusedSub asserts that the server refuses nc subscribing to subject.
func refusedSub(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(time.Second); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Errorf("subscribe to %s: got %v, want a permissions violation", subject, err)
	}
}

// TestPermissionsOnAServer configures a real server with the permissions derived
// from examples/orders and proves both directions: each role can do its job, and
// cannot do anything else.
func TestPermissionsOnAServer(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "orders")
	url := permissionsServer(t, dir, "checkout", "fulfilment", "email", permissions.PlanRole, permissions.ApplyRole)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// natsplan-plan plans but can not apply.
	code, p := planJSON(t, url(permissions.PlanRole), dir)
	if code != exitChanges {
		t.Fatalf("plan as natsplan-plan: exit %d, want %d", code, exitChanges)
	}
	var changed []string
	for _, f := range p.Findings {
		if f.Code == permissions.CodeChanged {
			changed = append(changed, f.Address)
		}
	}
	if want := []string{"service.email", "service.fulfilment", "role.natsplan-apply"}; !slices.Equal(changed, want) {
		t.Errorf("the plan notes permission changes of %v, want %v", changed, want)
	}
	code, _, errOut := cli(t, url(permissions.PlanRole), "apply", "--auto-approve", "--timeout", "2s", dir)
	if code != exitError || !strings.Contains(errOut, "permission denied") || !strings.Contains(errOut, "$JS.API.STREAM.CREATE.") {
		t.Fatalf("apply as natsplan-plan: exit %d, want a permission error\n%s", code, errOut)
	}
	admin := connectAs(t, url("admin"), "")
	ajs, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if names := streamNames(ctx, t, ajs); len(names) != 0 {
		t.Fatalf("natsplan-plan created %v", names)
	}

	// natsplan-apply applies; natsplan-plan then sees no changes and no drift.
	if code, _, errOut := cli(t, url(permissions.ApplyRole), "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply as natsplan-apply: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := cli(t, url(permissions.PlanRole), "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("plan as natsplan-plan after apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url(permissions.PlanRole), "drift", dir); code != 0 {
		t.Fatalf("drift as natsplan-plan: exit %d\n%s\n%s", code, out, errOut)
	}
	// status exits 2 when a condition holds (no worker has pulled yet); never 1.
	if code, out, errOut := cli(t, url(permissions.PlanRole), "status", dir); code == exitError || errOut != "" {
		t.Fatalf("status as natsplan-plan: exit %d\n%s\n%s", code, out, errOut)
	}

	// Another project's stream is out of natsplan-apply's reach, and natsplan-plan writes nothing.
	if _, err := ajs.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"},
		Metadata: map[string]string{"natsplan.project": "other"}}); err != nil {
		t.Fatal(err)
	}
	applier := connectAs(t, url(permissions.ApplyRole), "")
	for _, op := range []string{"STREAM.DELETE.OTHER", "STREAM.UPDATE.OTHER", "STREAM.PURGE.OTHER", "CONSUMER.CREATE.OTHER.x", "STREAM.PURGE.ORDERS"} {
		refused(t, applier, "$JS.API."+op)
	}
	planner := connectAs(t, url(permissions.PlanRole), "")
	for _, op := range []string{"STREAM.CREATE.NEW", "STREAM.DELETE.ORDERS", "CONSUMER.DELETE.ORDERS.email", "CONSUMER.MSG.NEXT.ORDERS.email"} {
		refused(t, planner, "$JS.API."+op)
	}
	if _, err := ajs.Stream(ctx, "OTHER"); err != nil {
		t.Fatalf("stream OTHER after the refusals: %v", err)
	}

	// checkout publishes with the JetStream ack, on its own inbox only.
	checkout := connectAs(t, url("checkout"), "_INBOX_checkout")
	cjs, err := jetstream.New(checkout)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		if _, err := cjs.Publish(ctx, fmt.Sprintf("orders.c%d.created", i), []byte("{}")); err != nil {
			t.Fatalf("checkout publish: %v", err)
		}
	}
	refused(t, checkout, "orders.c1.shipped")
	refused(t, checkout, "billing.c1")
	refused(t, checkout, "$JS.API.STREAM.DELETE.ORDERS")
	refusedSub(t, checkout, "_INBOX_fulfilment.>")
	refusedSub(t, checkout, "_INBOX.>")

	// fulfilment fetches and acks on every lane, and reads its dead letters by sequence.
	fulfilment := connectAs(t, url("fulfilment"), "_INBOX_fulfilment")
	fjs, err := jetstream.New(fulfilment)
	if err != nil {
		t.Fatal(err)
	}
	var termed *jetstream.MsgMetadata
	for lane := range 8 {
		name := fmt.Sprintf("fulfilment-%d", lane)
		cons, err := fjs.Consumer(ctx, "ORDERS", name)
		if err != nil {
			t.Fatalf("fulfilment binds %s: %v", name, err)
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatalf("fulfilment fetches from %s: %v", name, err)
		}
		var got int
		for msg := range batch.Messages() {
			got++
			if termed == nil {
				termed, _ = msg.Metadata()
				err = msg.Term()
			} else {
				err = msg.DoubleAck(ctx)
			}
			if err != nil {
				t.Fatalf("fulfilment acks on %s: %v", name, err)
			}
		}
		if got != 1 {
			t.Fatalf("fulfilment fetched %d messages from %s (%v), want 1", got, name, batch.Error())
		}
	}
	if _, err := fjs.Publish(ctx, "orders.c1.shipped", []byte("{}")); err != nil {
		t.Fatalf("fulfilment publish: %v", err)
	}
	dlq, err := fjs.Stream(ctx, "ORDERS_DLQ")
	if err != nil {
		t.Fatalf("fulfilment reads ORDERS_DLQ info: %v", err)
	}
	var letter *jetstream.RawStreamMsg
	for deadline := time.Now().Add(10 * time.Second); letter == nil && time.Now().Before(deadline); {
		if letter, err = dlq.GetMsg(ctx, 1); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatalf("fulfilment gets dead letter 1: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if letter == nil {
		t.Fatal("no dead letter arrived after a term")
	}
	var advisory struct {
		StreamSeq uint64 `json:"stream_seq"`
	}
	if err := json.Unmarshal(letter.Data, &advisory); err != nil || advisory.StreamSeq != termed.Sequence.Stream {
		t.Fatalf("dead letter %s names sequence %d (%v), want %d", letter.Data, advisory.StreamSeq, err, termed.Sequence.Stream)
	}
	orders, err := fjs.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatalf("fulfilment reads ORDERS info: %v", err)
	}
	if _, err := orders.GetMsg(ctx, advisory.StreamSeq); err != nil {
		t.Fatalf("fulfilment gets the message a dead letter names: %v", err)
	}
	for _, subject := range []string{
		"$JS.API.CONSUMER.MSG.NEXT.ORDERS.email", "$JS.API.CONSUMER.INFO.ORDERS.email", "$JS.ACK.ORDERS.email.1.1.1.1.1",
		"$JS.API.STREAM.DELETE.ORDERS", "$JS.API.STREAM.PURGE.ORDERS", "$JS.API.STREAM.PURGE.ORDERS_DLQ",
		"$JS.API.CONSUMER.CREATE.ORDERS", "$JS.API.CONSUMER.CREATE.ORDERS.mine", "$JS.API.CONSUMER.DURABLE.CREATE.ORDERS.mine",
		"$JS.API.CONSUMER.DELETE.ORDERS.fulfilment-0", "$JS.API.STREAM.MSG.DELETE.ORDERS", "orders.c1.created",
	} {
		refused(t, fulfilment, subject)
	}
	refusedSub(t, fulfilment, "_INBOX_checkout.>")

	// email fetches from its one consumer and from no lane of fulfilment.
	email := connectAs(t, url("email"), "_INBOX_email")
	ejs, err := jetstream.New(email)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := ejs.Consumer(ctx, "ORDERS", "email")
	if err != nil {
		t.Fatalf("email binds: %v", err)
	}
	batch, err := cons.Fetch(10, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for msg := range batch.Messages() {
		got++
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatalf("email acks: %v", err)
		}
	}
	if got != 10 {
		t.Fatalf("email fetched %d messages, want 10 (%v)", got, batch.Error())
	}
	refused(t, email, "$JS.API.CONSUMER.MSG.NEXT.ORDERS.fulfilment-0")
	refused(t, email, "$JS.API.STREAM.MSG.GET.ORDERS_DLQ")
}

func streamNames(ctx context.Context, t *testing.T, js jetstream.JetStream) []string {
	t.Helper()
	var names []string
	l := js.StreamNames(ctx)
	for n := range l.Name() {
		names = append(names, n)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

const bucketsConfig = `
natsplan {
  project = "web"
  lock {
    ttl = "2s"
  }
}
kv "sessions" {
  history = 1
}
kv "flags" {}
object_store "assets" {}
service "site" {
  writes = [kv.sessions]
  reads  = [kv.flags, object_store.assets]
}
service "uploader" {
  writes = [object_store.assets]
}
`

// TestBucketPermissionsOnAServer proves the KV, object store and apply lock
// permissions: natsplan-apply takes the lock, waits on it while another holds it,
// and creates the buckets; services read and write what they declare and no more.
func TestBucketPermissionsOnAServer(t *testing.T) {
	dir := writeConfig(t, map[string]string{"web.hcl": bucketsConfig})
	url := permissionsServer(t, dir, "site", "uploader", permissions.ApplyRole)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if code, _, errOut := cli(t, url(permissions.ApplyRole), "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply as natsplan-apply: exit %d\n%s", code, errOut)
	}
	// A second apply while the lock is held waits on it (a watch) and reports the holder.
	holder := connectAs(t, url(permissions.ApplyRole), "")
	lease, err := lock.Acquire(ctx, holder, "web", lock.Options{TTL: 2 * time.Second, Holder: "the test"})
	if err != nil {
		t.Fatalf("natsplan-apply takes the lock: %v", err)
	}
	code, _, errOut := cli(t, url(permissions.ApplyRole), "apply", "--auto-approve", "--lock-timeout", "500ms", dir)
	if code != exitError || !strings.Contains(errOut, "held by the test") {
		t.Fatalf("apply while the lock is held: exit %d, want the holder named\n%s", code, errOut)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("natsplan-apply releases the lock: %v", err)
	}

	admin := connectAs(t, url("admin"), "")
	ajs, _ := jetstream.New(admin)
	flags, err := ajs.KeyValue(ctx, "flags")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flags.Put(ctx, "dark-mode", []byte("on")); err != nil {
		t.Fatal(err)
	}

	site := connectAs(t, url("site"), "_INBOX_site")
	sjs, _ := jetstream.New(site)
	sessions, err := sjs.KeyValue(ctx, "sessions")
	if err != nil {
		t.Fatalf("site opens sessions: %v", err)
	}
	if _, err := sessions.Put(ctx, "u1", []byte("token")); err != nil {
		t.Fatalf("site writes sessions: %v", err)
	}
	if e, err := sessions.Get(ctx, "u1"); err != nil || string(e.Value()) != "token" {
		t.Fatalf("site reads sessions: %v", err)
	}
	sflags, err := sjs.KeyValue(ctx, "flags")
	if err != nil {
		t.Fatalf("site opens flags: %v", err)
	}
	if e, err := sflags.Get(ctx, "dark-mode"); err != nil || string(e.Value()) != "on" {
		t.Fatalf("site reads flags: %v", err)
	}

	uploader := connectAs(t, url("uploader"), "_INBOX_uploader")
	ujs, _ := jetstream.New(uploader)
	store, err := ujs.ObjectStore(ctx, "assets")
	if err != nil {
		t.Fatalf("uploader opens assets: %v", err)
	}
	body := strings.Repeat("asset ", 100000) // several chunks
	for range 2 {                            // the second put replaces the first and purges its chunks
		if _, err := store.PutString(ctx, "logo.svg", body); err != nil {
			t.Fatalf("uploader puts an object: %v", err)
		}
	}
	sstore, err := sjs.ObjectStore(ctx, "assets")
	if err != nil {
		t.Fatalf("site opens assets: %v", err)
	}
	if got, err := sstore.GetString(ctx, "logo.svg"); err != nil || got != body {
		t.Fatalf("site reads an object: %d bytes, %v", len(got), err)
	}

	for _, subject := range []string{"$KV.flags.dark-mode", "$KV.natsplan_lock.web", "$O.assets.M.x", "$O.assets.C.x",
		"$JS.API.STREAM.PURGE.OBJ_assets", "$JS.API.STREAM.DELETE.KV_sessions", "$JS.API.STREAM.INFO.KV_natsplan_lock"} {
		refused(t, site, subject)
	}
	for _, subject := range []string{"$KV.sessions.u1", "$JS.API.DIRECT.GET.KV_sessions.$KV.sessions.u1", "$JS.API.STREAM.DELETE.OBJ_assets"} {
		refused(t, uploader, subject)
	}
}
