// Package connect opens the NATS connection natsplan works over, the way users of the
// nats CLI expect: the same flags, the same NATS_* environment variables, and the same
// saved contexts (~/.config/nats/context/<name>.json, the selected one named in
// ~/.config/nats/context.txt). Flags override the environment, and both override the
// context.
package connect

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/jsm.go/natscontext"
	"github.com/nats-io/nats.go"
)

// DefaultTimeout bounds connecting and each request when no timeout is given (the nats CLI's default).
const DefaultTimeout = 5 * time.Second

// Options are the connection settings of the global flags.
type Options struct {
	Server   string // -s/--server, NATS_URL: comma-separated URLs
	Context  string // --context, NATS_CONTEXT: a nats CLI saved context
	Creds    string // --creds, NATS_CREDS: a user credentials file
	NKey     string // --nkey, NATS_NKEY: a user nkey seed file
	User     string // --user, NATS_USER
	Password string // --password, NATS_PASSWORD
	Token    string // --token, NATS_TOKEN
	TLSCert  string // --tlscert, NATS_CERT: client certificate file
	TLSKey   string // --tlskey, NATS_KEY: client key file
	TLSCA    string // --tlsca, NATS_CA: CA bundle to verify the server with
	JSDomain string // --js-domain: the JetStream domain to manage
	TLSFirst bool   // --tlsfirst: TLS handshake before the server's greeting
	JWT      string // --jwt: the user JWT (a literal or a reference such as file:///path)
	Seed     string // --seed: the user's nkey seed, to sign with the JWT (a reference such as env://VAR)
	// SocksProxy is --socks-proxy, NATS_SOCKS_PROXY: a SOCKS5 proxy to connect through.
	SocksProxy string
	// NoContext is --no-context: use no nats context, not even the selected one.
	NoContext bool
	// DefaultServer replaces nats://127.0.0.1:4222 when neither Server nor the
	// context names a server: apply takes a saved plan's target from it.
	DefaultServer string
	// Timeout bounds connecting (--timeout, NATS_TIMEOUT); 0 means DefaultTimeout.
	Timeout time.Duration
	// Name is the connection name the server shows in connz (default "natsplan").
	Name string
	// Environment names the environment block the settings come from, if any: the
	// advice of a failed connection then names its settings, not the global flags.
	Environment string
	// ConfigDir is where the nats CLI keeps its settings: contexts are read from
	// ConfigDir/nats/context. Empty means $XDG_CONFIG_HOME, else ~/.config.
	ConfigDir string

	// envErr is a bad value found by FromEnv, reported by dial.
	envErr error
}

// FromEnv fills the fields that are still unset from the environment, using the
// variables the nats CLI reads (NATS_URL, NATS_CONTEXT, NATS_CREDS, NATS_NKEY,
// NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CERT, NATS_KEY, NATS_CA, NATS_SOCKS_PROXY,
// NATS_TIMEOUT)
// and XDG_CONFIG_HOME or HOME for ConfigDir. Like the nats CLI, the JetStream domain
// has no variable: it comes from --js-domain or the context. A bad NATS_TIMEOUT is
// reported by dial.
func (o *Options) FromEnv(getenv func(string) string) {
	fill := func(dst *string, name string) {
		if *dst == "" {
			*dst = getenv(name)
		}
	}
	fill(&o.Server, "NATS_URL")
	if !o.NoContext { // the flag wins over the variable
		fill(&o.Context, "NATS_CONTEXT")
	}
	fill(&o.Creds, "NATS_CREDS")
	fill(&o.NKey, "NATS_NKEY")
	fill(&o.User, "NATS_USER")
	fill(&o.Password, "NATS_PASSWORD")
	fill(&o.Token, "NATS_TOKEN")
	fill(&o.TLSCert, "NATS_CERT")
	fill(&o.TLSKey, "NATS_KEY")
	fill(&o.TLSCA, "NATS_CA")
	fill(&o.SocksProxy, "NATS_SOCKS_PROXY")
	if o.Timeout == 0 {
		if v := getenv("NATS_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				o.envErr = fmt.Errorf("NATS_TIMEOUT=%q is not a positive duration: set it like 5s or 1m, or pass --timeout", v)
			} else {
				o.Timeout = d
			}
		}
	}
	if o.ConfigDir == "" {
		if x := getenv("XDG_CONFIG_HOME"); x != "" {
			o.ConfigDir = x
		} else if h := getenv("HOME"); h != "" {
			o.ConfigDir = filepath.Join(h, ".config")
		}
	}
}

// dial resolves the context (the named one, else the selected one, else none), lays
// the options over it, and connects. It returns the connection and the JetStream
// domain to manage ("" for the account's own JetStream).
func dial(ctx context.Context, o Options) (*nats.Conn, string, error) {
	return DialWith(ctx, o)
}

// DialWith is dial with further nats.go options, applied after the context's (error
// handlers, reconnect behaviour).
func DialWith(ctx context.Context, o Options, extra ...nats.Option) (*nats.Conn, string, error) {
	if o.envErr != nil {
		return nil, "", o.envErr
	}
	nctx, err := resolve(ctx, o)
	if err != nil {
		return nil, "", err
	}
	if nctx.JSAPIPrefix() != "" && nctx.JSDomain() == "" {
		return nil, "", fmt.Errorf("context %q sets jetstream_api_prefix, which natsplan does not support: set jetstream_domain in the context or pass --js-domain", nctx.Name)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	name := o.Name
	if name == "" {
		name = "natsplan"
	}
	nopts, err := nctx.NATSOptions(append([]nats.Option{nats.Name(name), nats.Timeout(timeout)}, extra...)...)
	if err != nil {
		return nil, "", fmt.Errorf("connection settings%s: %w", contextSuffix(nctx), err)
	}
	url := nctx.ServerURL()
	nc, err := connectCtx(ctx, url, nopts)
	if err != nil {
		return nil, "", explain(url, nctx, o.Environment, err)
	}
	return nc, nctx.JSDomain(), nil
}

// resolve loads the context and applies the options over it.
func resolve(ctx context.Context, o Options) (*natscontext.Context, error) {
	if o.TLSCert != "" && o.TLSKey == "" || o.TLSCert == "" && o.TLSKey != "" {
		return nil, fmt.Errorf("a client certificate needs both --tlscert and --tlskey")
	}
	if o.Seed != "" && o.JWT == "" {
		return nil, fmt.Errorf("--seed signs for a user JWT: pass --jwt too, or use --creds or --nkey")
	}
	data, name, err := loadContext(ctx, o)
	if err != nil {
		return nil, err
	}
	// Credentials given as flags or variables replace the context's credentials
	// entirely; otherwise the context's user would win over a --creds flag. A lone
	// --password keeps the context's user.
	if o.User != "" || o.Password != "" || o.Creds != "" || o.NKey != "" || o.Token != "" || o.JWT != "" {
		keepUser := o.User == "" && o.Password != "" && o.Creds == "" && o.NKey == "" && o.Token == "" && o.JWT == ""
		if data, err = withoutAuth(data, keepUser); err != nil {
			return nil, fmt.Errorf("context %q: %w", name, err)
		}
	}
	server := o.Server
	if server == "" && !namesServer(data) {
		server = o.DefaultServer
	}
	opts := []natscontext.Option{
		natscontext.WithServerURL(server),
		natscontext.WithUser(o.User),
		natscontext.WithPassword(o.Password),
		natscontext.WithCreds(o.Creds),
		natscontext.WithNKey(o.NKey),
		natscontext.WithToken(o.Token),
		natscontext.WithCertificate(o.TLSCert),
		natscontext.WithKey(o.TLSKey),
		natscontext.WithCA(o.TLSCA),
		natscontext.WithJSDomain(o.JSDomain),
	}
	// These options set their field even when empty: pass them only when given, so
	// the context's value stays otherwise.
	if o.JWT != "" {
		opts = append(opts, natscontext.WithUserJWT(o.JWT), natscontext.WithUserSeed(o.Seed))
	}
	if o.SocksProxy != "" {
		opts = append(opts, natscontext.WithSocksProxy(o.SocksProxy))
	}
	if o.TLSFirst {
		opts = append(opts, natscontext.WithTLSHandshakeFirst())
	}
	nctx, err := natscontext.NewFromBytes(data, opts...)
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", name, err)
	}
	nctx.Name = name
	return nctx, nil
}

// loadContext returns the raw JSON of the context to use and its name; "{}" and ""
// when no context is named or selected.
func loadContext(ctx context.Context, o Options) ([]byte, string, error) {
	if o.NoContext {
		if o.Context != "" {
			return nil, "", fmt.Errorf("--no-context and --context %q exclude each other: drop one", o.Context)
		}
		return []byte("{}"), "", nil
	}
	root := o.ConfigDir
	if root == "" {
		root = defaultConfigDir()
	}
	if root == "" {
		if o.Context != "" {
			return nil, "", fmt.Errorf("context %q: cannot find the nats configuration folder: set XDG_CONFIG_HOME or HOME", o.Context)
		}
		return []byte("{}"), "", nil
	}
	fb := natscontext.NewFileBackendAt(root)
	dir := filepath.Join(root, "nats", "context")
	name, selected := o.Context, false
	if name == "" {
		s, err := fb.Selected(ctx)
		if errors.Is(err, natscontext.ErrNoneSelected) || s == "" {
			return []byte("{}"), "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("read the selected nats context: %w", err)
		}
		name, selected = s, true
	}
	data, err := fb.Load(ctx, name)
	switch {
	case errors.Is(err, natscontext.ErrNotFound) && selected:
		return nil, "", fmt.Errorf("the selected nats context %q does not exist in %s: select another with `nats context select`, or pass --context or --server", name, dir)
	case errors.Is(err, natscontext.ErrNotFound):
		return nil, "", fmt.Errorf("nats context %q does not exist in %s: list them with `nats context ls`, or pass --server instead", name, dir)
	case errors.Is(err, natscontext.ErrInvalidName):
		return nil, "", fmt.Errorf("nats context %q: invalid name: %w", name, err)
	case err != nil:
		return nil, "", fmt.Errorf("read nats context %q: %w", name, err)
	}
	return data, name, nil
}

// namesServer reports whether a context's JSON names the servers to connect to.
func namesServer(data []byte) bool {
	var c struct {
		URL string `json:"url"`
		NSC string `json:"nsc"`
	}
	return json.Unmarshal(data, &c) == nil && (c.URL != "" || c.NSC != "")
}

// withoutAuth removes the credentials from a context's JSON, but the user name when keepUser.
func withoutAuth(data []byte, keepUser bool) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	// The context fields that carry credentials.
	for _, k := range []string{"user", "password", "creds", "nkey", "token", "user_jwt", "user_seed", "nsc"} {
		if k != "user" || !keepUser {
			delete(m, k)
		}
	}
	return json.Marshal(m)
}

// connectCtx connects, giving up when ctx ends (nats.Connect itself takes no context).
func connectCtx(ctx context.Context, url string, opts []nats.Option) (*nats.Conn, error) {
	type result struct {
		nc  *nats.Conn
		err error
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(url, opts...)
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		return r.nc, r.err
	case <-ctx.Done():
		// Close the connection if it arrives after all, so nothing leaks.
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// explain turns a connect error into one that says what to do: which flags to pass,
// or which settings of the environment block env to check.
func explain(url string, nctx *natscontext.Context, env string, err error) error {
	where := redact(url) + contextSuffix(nctx)
	h := flagHints
	if env != "" {
		where += fmt.Sprintf(" (environment %q)", env)
		h = envHints
	}
	switch {
	case errors.Is(err, nats.ErrNoServers):
		return fmt.Errorf("no server at %s: %s", where, h.noServer)
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return fmt.Errorf("connect to %s: %w: %s", where, err, h.auth)
	case errors.Is(err, nats.ErrSecureConnRequired):
		return fmt.Errorf("connect to %s: %w: %s", where, err, h.secure)
	case errors.As(err, new(x509.UnknownAuthorityError)):
		return fmt.Errorf("connect to %s: %w: %s", where, err, h.unknownCA)
	case errors.As(err, new(x509.HostnameError)):
		return fmt.Errorf("connect to %s: %w: connect with a host name the server's certificate lists", where, err)
	case errors.Is(err, nats.ErrTLS), isRemoteAlert(err):
		return fmt.Errorf("connect to %s: %w: %s", where, err, h.clientCert)
	}
	return fmt.Errorf("connect to %s: %w", where, err)
}

// hints are the advice of explain, in the words of where the settings came from.
type hints struct{ noServer, auth, secure, unknownCA, clientCert string }

var (
	flagHints = hints{
		noServer:   "start one, pass --server, or use --embedded DIR",
		auth:       "check --user/--password, --token, --creds or --nkey (or the context's credentials)",
		secure:     "use a tls:// URL or pass --tlsca",
		unknownCA:  "pass --tlsca with the CA that signed the server's certificate",
		clientCert: "if the server requires a client certificate, pass --tlscert and --tlskey",
	}
	envHints = hints{
		noServer:   "check the environment's servers (or context) setting and the variables its env() reads, or use --embedded DIR",
		auth:       "check the environment's user/password, token, creds or nkey settings (or its context's credentials) and the variables its env() reads",
		secure:     "use a tls:// URL in the environment's servers, or set tls { ca = \"...\" } in it",
		unknownCA:  "set tls { ca = \"...\" } in the environment to the CA that signed the server's certificate",
		clientCert: "if the server requires a client certificate, set tls { cert = \"...\", key = \"...\" } in the environment",
	}
)

// isRemoteAlert reports whether the server ended the TLS handshake with an alert, such
// as "certificate required".
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// contextSuffix names the context in messages, when one is used.
func contextSuffix(nctx *natscontext.Context) string {
	if nctx == nil || nctx.Name == "" {
		return ""
	}
	return fmt.Sprintf(" (nats context %q)", nctx.Name)
}

// redact hides the user-info part of every URL in a comma-separated list.
func redact(urls string) string { return replaceUserInfo(urls, "xxxxx@") }

// Redact hides the whole user-info part (user name, password or token) of every URL in
// a comma-separated list, for messages: a token written as the user name of a URL is a
// secret too, which url.URL.Redacted leaves in place.
func Redact(urls string) string { return redact(urls) }

// WithoutUserInfo drops the user-info part (user, password or token) of every URL in a
// comma-separated list: a saved plan's target URL is used without the credentials it
// was redacted from.
func WithoutUserInfo(urls string) string { return replaceUserInfo(urls, "") }

func replaceUserInfo(urls, with string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if at := strings.LastIndex(p, "@"); at >= 0 {
			scheme := ""
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				scheme = p[:s+3]
			}
			p = scheme + with + p[at+1:]
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// defaultConfigDir is where the nats CLI keeps its settings when Options.ConfigDir is
// unset: $XDG_CONFIG_HOME, else ~/.config (on every platform, as natscontext does).
func defaultConfigDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".config")
	}
	return ""
}
