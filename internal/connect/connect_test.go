package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"NATS_URL": "nats://env:4222", "NATS_CONTEXT": "envctx", "NATS_CREDS": "/env.creds",
		"NATS_NKEY": "/env.nk", "NATS_USER": "envuser", "NATS_PASSWORD": "envpass",
		"NATS_TOKEN": "envtok", "NATS_CERT": "/env.crt", "NATS_KEY": "/env.key", "NATS_CA": "/env.ca",
		"NATS_TIMEOUT": "7s", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u", "NATS_SOCKS_PROXY": "proxy:1080",
	}
	tests := []struct {
		name string
		in   Options
		env  map[string]string
		want Options
	}{
		{
			name: "every variable fills an unset field",
			env:  env,
			want: Options{Server: "nats://env:4222", Context: "envctx", Creds: "/env.creds", NKey: "/env.nk",
				User: "envuser", Password: "envpass", Token: "envtok", TLSCert: "/env.crt", TLSKey: "/env.key",
				TLSCA: "/env.ca", Timeout: 7 * time.Second, ConfigDir: "/xdg", SocksProxy: "proxy:1080"},
		},
		{
			name: "--no-context keeps NATS_CONTEXT out",
			in:   Options{NoContext: true},
			env:  map[string]string{"NATS_CONTEXT": "envctx"},
			want: Options{NoContext: true},
		},
		{
			name: "flags win over the environment",
			in:   Options{Server: "nats://flag:4222", User: "flaguser", Timeout: time.Second, ConfigDir: "/cfg", JSDomain: "hub"},
			env:  env,
			want: Options{Server: "nats://flag:4222", Context: "envctx", Creds: "/env.creds", NKey: "/env.nk",
				User: "flaguser", Password: "envpass", Token: "envtok", TLSCert: "/env.crt", TLSKey: "/env.key",
				TLSCA: "/env.ca", Timeout: time.Second, ConfigDir: "/cfg", JSDomain: "hub", SocksProxy: "proxy:1080"},
		},
		{
			name: "HOME/.config without XDG_CONFIG_HOME",
			env:  map[string]string{"HOME": "/home/u"},
			want: Options{ConfigDir: "/home/u/.config"},
		},
		{
			name: "no JetStream domain variable, like the nats CLI",
			env:  map[string]string{"NATS_JS_DOMAIN": "hub", "NATS_DOMAIN": "hub"},
			want: Options{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			got.FromEnv(func(k string) string { return tc.env[k] })
			if got != tc.want {
				t.Errorf("FromEnv:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFromEnvBadTimeout(t *testing.T) {
	var o Options
	o.FromEnv(func(k string) string {
		if k == "NATS_TIMEOUT" {
			return "soon"
		}
		return ""
	})
	_, _, err := dial(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), `NATS_TIMEOUT="soon"`) || !strings.Contains(err.Error(), "--timeout") {
		t.Fatalf("dial with bad NATS_TIMEOUT: got %v, want an error naming the variable and the flag", err)
	}
}

// startAuthServer starts a server that requires the given credentials; embedded.Options
// has no auth, so the server options are built here.
func startAuthServer(t *testing.T, configure func(*server.Options)) *server.Server {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1}
	configure(opts)
	return testsrv.StartOptions(t, opts)
}

// writeContext saves a nats CLI context under dir, as `nats context save` would.
func writeContext(t *testing.T, dir, name string, fields map[string]string) {
	t.Helper()
	p := filepath.Join(dir, "nats", "context", name+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func selectContext(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "nats", "context.txt"), []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDial(t *testing.T) {
	users := startAuthServer(t, func(o *server.Options) { o.Username, o.Password = "alice", "s3cret" })
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	nkeyed := startAuthServer(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} })
	tokens := startAuthServer(t, func(o *server.Options) { o.Authorization = "t0ken" })
	ports, err := embedded.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	deadURL := fmt.Sprintf("nats://127.0.0.1:%d", ports[0])

	// One config folder with a selected context and a few named ones.
	cfg := t.TempDir()
	writeContext(t, cfg, "prod", map[string]string{"url": users.ClientURL(), "user": "alice", "password": "s3cret", "jetstream_domain": "hub"})
	writeContext(t, cfg, "stale", map[string]string{"url": users.ClientURL(), "user": "alice", "password": "old"})
	writeContext(t, cfg, "prefixed", map[string]string{"url": users.ClientURL(), "jetstream_api_prefix": "$JS.x.API"})
	selectContext(t, cfg, "prod")
	missingSel := t.TempDir()
	writeContext(t, missingSel, "other", map[string]string{"url": users.ClientURL()})
	selectContext(t, missingSel, "gone")

	tests := []struct {
		name       string
		o          Options
		wantURL    string
		wantDomain string
		wantErr    []string
	}{
		{name: "flags only, no context", o: Options{Server: users.ClientURL(), User: "alice", Password: "s3cret", ConfigDir: t.TempDir()},
			wantURL: users.ClientURL()},
		{name: "selected context", o: Options{ConfigDir: cfg}, wantURL: users.ClientURL(), wantDomain: "hub"},
		{name: "named context, flag overrides its password", o: Options{ConfigDir: cfg, Context: "stale", Password: "s3cret"},
			wantURL: users.ClientURL()},
		{name: "flag domain overrides the context's", o: Options{ConfigDir: cfg, JSDomain: "leaf"}, wantURL: users.ClientURL(), wantDomain: "leaf"},
		{name: "token flag replaces the context's user and password", o: Options{ConfigDir: cfg, Server: tokens.ClientURL(), Token: "t0ken"},
			wantURL: tokens.ClientURL(), wantDomain: "hub"},
		{name: "nkey flag replaces the context's user and password", o: Options{ConfigDir: cfg, Server: nkeyed.ClientURL(), NKey: seedFile},
			wantURL: nkeyed.ClientURL(), wantDomain: "hub"},
		{name: "wrong password", o: Options{ConfigDir: cfg, Context: "stale"},
			wantErr: []string{"Authorization Violation", "--user/--password", `nats context "stale"`}},
		{name: "token required", o: Options{Server: tokens.ClientURL(), ConfigDir: t.TempDir()},
			wantErr: []string{"Authorization Violation", "--token"}},
		{name: "no server", o: Options{Server: deadURL, ConfigDir: t.TempDir()},
			wantErr: []string{"no server at " + deadURL + ": start one, pass --server, or use --embedded DIR"}},
		{name: "unknown named context", o: Options{ConfigDir: cfg, Context: "nope"},
			wantErr: []string{`nats context "nope" does not exist`, "nats context ls"}},
		{name: "selected context is gone", o: Options{ConfigDir: missingSel},
			wantErr: []string{`selected nats context "gone" does not exist`, "nats context select"}},
		{name: "api prefix is refused", o: Options{ConfigDir: cfg, Context: "prefixed"},
			wantErr: []string{"jetstream_api_prefix", "--js-domain"}},
		{name: "cert without key", o: Options{ConfigDir: cfg, TLSCert: "/x.crt"},
			wantErr: []string{"--tlscert and --tlskey"}},
		{name: "--no-context ignores the selected context", o: Options{ConfigDir: cfg, NoContext: true, Server: tokens.ClientURL(), Token: "t0ken"},
			wantURL: tokens.ClientURL()},
		{name: "--no-context with --context", o: Options{ConfigDir: cfg, NoContext: true, Context: "prod"},
			wantErr: []string{"--no-context and --context \"prod\" exclude each other"}},
		{name: "default server when nothing names one", o: Options{DefaultServer: tokens.ClientURL(), Token: "t0ken", ConfigDir: t.TempDir()},
			wantURL: tokens.ClientURL()},
		{name: "the selected context's url wins over the default server", o: Options{ConfigDir: cfg, DefaultServer: deadURL},
			wantURL: users.ClientURL(), wantDomain: "hub"},
		{name: "the flag wins over the default server", o: Options{Server: users.ClientURL(), User: "alice", Password: "s3cret", DefaultServer: deadURL, ConfigDir: t.TempDir()},
			wantURL: users.ClientURL()},
		{name: "seed without jwt", o: Options{Server: users.ClientURL(), Seed: "env://SEED", ConfigDir: t.TempDir()},
			wantErr: []string{"--seed signs for a user JWT: pass --jwt too"}},
		{name: "password is redacted from the url", o: Options{Server: "nats://bob:hunter2@" + strings.TrimPrefix(deadURL, "nats://"), ConfigDir: t.TempDir()},
			wantErr: []string{"no server at nats://xxxxx@127.0.0.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Timeout = 2 * time.Second
			nc, domain, err := dial(context.Background(), tc.o)
			if tc.wantErr != nil {
				if err == nil {
					nc.Close()
					t.Fatalf("dial succeeded, want an error containing %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer nc.Close()
			if got := nc.ConnectedUrl(); got != tc.wantURL {
				t.Errorf("connected to %s, want %s", got, tc.wantURL)
			}
			if domain != tc.wantDomain {
				t.Errorf("domain %q, want %q", domain, tc.wantDomain)
			}
			if err := nc.Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
		})
	}
}

// TestResolveConnectionFlags: the flags the nats CLI has for TLS-first servers, SOCKS
// proxies and user JWTs reach the connection settings, over the context's.
func TestResolveConnectionFlags(t *testing.T) {
	cfg := t.TempDir()
	writeContext(t, cfg, "ctx", map[string]string{"url": "nats://ctx:4222", "socks_proxy": "ctxproxy:1080", "user": "bob"})
	selectContext(t, cfg, "ctx")
	nctx, err := resolve(context.Background(), Options{ConfigDir: cfg, TLSFirst: true, SocksProxy: "proxy:1080",
		JWT: "file:///u.jwt", Seed: "env://SEED"})
	if err != nil {
		t.Fatal(err)
	}
	if !nctx.TLSHandshakeFirst() || nctx.SocksProxy() != "proxy:1080" || nctx.UserJWT() != "file:///u.jwt" ||
		nctx.UserSeed() != "env://SEED" || nctx.User() != "" {
		t.Errorf("tlsfirst %v, socks %q, jwt %q, seed %q, user %q", nctx.TLSHandshakeFirst(), nctx.SocksProxy(),
			nctx.UserJWT(), nctx.UserSeed(), nctx.User())
	}
	// Not given: the context's values stay.
	nctx, err = resolve(context.Background(), Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if nctx.TLSHandshakeFirst() || nctx.SocksProxy() != "ctxproxy:1080" || nctx.User() != "bob" {
		t.Errorf("context values lost: tlsfirst %v, socks %q, user %q", nctx.TLSHandshakeFirst(), nctx.SocksProxy(), nctx.User())
	}
}

func TestDialCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := startAuthServer(t, func(*server.Options) {})
	nc, _, err := dial(ctx, Options{Server: s.ClientURL(), ConfigDir: t.TempDir()})
	if err == nil {
		nc.Close()
		t.Fatal("dial with a cancelled context succeeded")
	}
}

func TestWithoutUserInfo(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                       "nats://127.0.0.1:4222",
		"nats://xxxxx@n1:4222":                        "nats://n1:4222",
		"tls://bob:xxxxx@n1:4222, nats://tok@n2:4222": "tls://n1:4222,nats://n2:4222",
		"": "",
	} {
		if got := WithoutUserInfo(in); got != want {
			t.Errorf("WithoutUserInfo(%q) = %q, want %q", in, got, want)
		}
	}
}
