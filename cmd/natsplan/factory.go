package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/schema"
)

// GlobalOptions are the flags every command shares (docs/connecting.md).
type GlobalOptions struct {
	Conn     connect.Options
	NoColor  bool
	Vars     []string
	VarFiles []string
	Embedded string
	// Trace prints every JetStream API request and reply to stderr.
	Trace bool
	// Envs are the --env patterns of the commands that take them (envFlag): the
	// environments to run; none means all.
	Envs []string

	timeoutSet bool // --timeout was given
	// connFlags are the connection flags given on the command line, by name; with
	// environments they override the one selected environment's settings.
	connFlags []string
	// envTimeout is the environment's timeout, between --timeout and $NATS_TIMEOUT.
	envTimeout time.Duration
}

func (g *GlobalOptions) bind(root *cobra.Command, getenv func(string) string) {
	fl := root.PersistentFlags()
	fl.StringVarP(&g.Conn.Server, "server", "s", "", "NATS server URLs, comma separated ($NATS_URL)")
	fl.StringVar(&g.Conn.Context, "context", "", "nats CLI context to use ($NATS_CONTEXT)")
	fl.StringVar(&g.Conn.Creds, "creds", "", "user credentials file ($NATS_CREDS)")
	fl.StringVar(&g.Conn.NKey, "nkey", "", "user NKey seed file ($NATS_NKEY)")
	fl.StringVar(&g.Conn.User, "user", "", "user name, with --password ($NATS_USER; a token goes in --token)")
	fl.StringVar(&g.Conn.Password, "password", "", "password ($NATS_PASSWORD)")
	fl.StringVar(&g.Conn.Token, "token", "", "authentication token ($NATS_TOKEN)")
	fl.StringVar(&g.Conn.TLSCert, "tlscert", "", "TLS client certificate file ($NATS_CERT)")
	fl.StringVar(&g.Conn.TLSKey, "tlskey", "", "TLS client key file ($NATS_KEY)")
	fl.StringVar(&g.Conn.TLSCA, "tlsca", "", "TLS CA certificate file ($NATS_CA)")
	fl.BoolVar(&g.Conn.TLSFirst, "tlsfirst", false, "do the TLS handshake before the server's greeting (servers with handshake_first)")
	fl.StringVar(&g.Conn.JWT, "jwt", "", "user JWT, or a reference to it (file:///path, env://VAR)")
	fl.StringVar(&g.Conn.Seed, "seed", "", "the user's nkey seed that signs for --jwt, as a reference (env://VAR, file:///path)")
	fl.StringVar(&g.Conn.SocksProxy, "socks-proxy", "", "SOCKS5 proxy to connect through, host:port ($NATS_SOCKS_PROXY)")
	fl.BoolVar(&g.Conn.NoContext, "no-context", false, "use no nats CLI context, not even the selected one")
	fl.BoolVar(&g.Trace, "trace", false, "print every JetStream API request and reply to stderr (secrets redacted)")
	fl.StringVar(&g.Conn.JSDomain, "js-domain", "", "JetStream domain")
	fl.DurationVar(&g.Conn.Timeout, "timeout", connect.DefaultTimeout, "bound on connecting and on each request to the server, a positive duration ($NATS_TIMEOUT)")
	fl.BoolVar(&g.NoColor, "no-color", getenv("NO_COLOR") != "", "never colour the output ($NO_COLOR)")
	fl.StringArrayVar(&g.Vars, "var", nil, "set a variable: NAME=VALUE (repeatable)")
	fl.StringArrayVar(&g.VarFiles, "var-file", nil, "read variables from a .tfvars-style file (repeatable)")
	fl.StringVar(&g.Embedded, "embedded", "", "run against an in-process nats-server storing in `DIR` (no server needed)")
}

// check validates the global flags once they are parsed.
func (g *GlobalOptions) check(c *cobra.Command) error {
	g.timeoutSet = c.Flags().Changed("timeout")
	g.connFlags = nil
	for _, name := range connFlagNames {
		if c.Flags().Changed(name) {
			g.connFlags = append(g.connFlags, name)
		}
	}
	if g.timeoutSet && g.Conn.Timeout <= 0 {
		return usageErr("--timeout %s: give a positive duration such as 5s or 1m", g.Conn.Timeout)
	}
	return nil
}

// timeout is --timeout, else the environment's timeout, else $NATS_TIMEOUT, else the default: the flag's default
// must not hide the variable. A bad variable is a usage error of the commands that
// connect.
func (g *GlobalOptions) timeout(getenv func(string) string) (time.Duration, error) {
	if g.timeoutSet {
		return g.Conn.Timeout, nil
	}
	if g.envTimeout > 0 {
		return g.envTimeout, nil
	}
	if v := getenv("NATS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, usageErr("NATS_TIMEOUT=%q is not a positive duration: set it like 5s or 1m, or pass --timeout", v)
		}
		return d, nil
	}
	return g.Conn.Timeout, nil
}

// Factory hands commands what they need, creating connections lazily so commands that
// need no server (validate, fmt, show) never try to reach one.
type Factory struct {
	IO     *IOStreams
	Global *GlobalOptions
	// Stop is closed on the first Ctrl-C.
	Stop   <-chan struct{}
	getenv func(string) string
	// writing is set while apply has requests in flight, which the first Ctrl-C lets
	// finish; it only changes what the interruption says.
	// The factories of environments share their parent's.
	writing *atomic.Bool

	session *Session
	loader  *schema.Loader
	// env is the environment this factory reaches (a child of newEnvRuns); nil for the
	// factory of the command line, which reaches the server the flags, NATS_* and the
	// nats CLI context name.
	env *model.Environment
	// desired is the environment's desired model, loaded once for all of them: Load
	// returns it instead of reading the files.
	desired *model.Model
	// secrets are the values the environment's env() settings resolved to, which
	// messages of this factory never show (see scrubber).
	secrets *scrubber
	// defaultServer is the server when nothing else names one (a saved plan's target).
	defaultServer string
	// only are the --only patterns of plan and apply: every plan computed is partial.
	only []string
}

func newFactory(io *IOStreams, getenv func(string) string, stop <-chan struct{}) *Factory {
	if _, ok := io.ErrOut.(*lockedWriter); !ok {
		streams := *io
		streams.ErrOut = &lockedWriter{w: io.ErrOut}
		io = &streams
	}
	return &Factory{IO: io, Global: &GlobalOptions{}, Stop: stop, getenv: getenv, writing: new(atomic.Bool)}
}

// reconnectWait is how long nats.go waits between attempts to reach a server that went
// away. Attempts never stop on their own (no reconnect limit): apply bounds the wait
// itself (apply.Options.ReconnectWindow), and every other command fails its requests.
const reconnectWait = 250 * time.Millisecond

// Color reports whether output to stdout may be coloured.
func (f *Factory) Color() bool { return f.IO.StdoutTTY && !f.Global.NoColor }

// ErrColor reports whether output to stderr may be coloured.
func (f *Factory) ErrColor() bool { return f.IO.StderrTTY && !f.Global.NoColor }

// Load reads the configuration files. Diagnostics are printed to stderr; any error
// makes Load fail with a silent exit 1, since the diagnostics already said why.
//
// The factory of an environment (or of a configuration whose environments were looked
// for first, see environments) returns the model loaded then, without reading again.
// Of a configuration with environment blocks, Load returns the first environment's
// model, after printing every environment's diagnostics: the commands that read no
// server (validate, permissions, partition) check the files with it.
func (f *Factory) Load(ctx context.Context, paths []string) (*model.Model, error) {
	return f.load(ctx, paths, false)
}

// load is Load; oneServer refuses a configuration with environment blocks, which the
// one server of the flags must never be planned against.
func (f *Factory) load(ctx context.Context, paths []string, oneServer bool) (*model.Model, error) {
	if f.desired != nil {
		if f.Global.Embedded != "" && f.env != nil {
			warnEmbeddedMemory(f.IO.ErrOut, f.desired)
		}
		return f.desired, nil
	}
	f.loader = schema.NewLoader()
	envs, diags, err := f.loader.LoadEnvironments(ctx, paths, schema.Vars{Args: f.Global.Vars, Files: f.Global.VarFiles}, nil)
	if err != nil {
		return nil, err
	}
	if oneServer && len(envs) > 0 && envs[0].Env != nil {
		// The scan before loading (mayDeclareEnvironments) missed them: never plan
		// such a configuration against the one server the flags name.
		return nil, &exitErr{Code: exitError, Err: fmt.Errorf("%s declares environment blocks that natsplan did not find before reading the files: start each with `environment \"NAME\" {` on a line of its own (docs/environments.md)",
			strings.Join(pathsOrDefault(paths), ", "))}
	}
	for _, e := range envs {
		diags = append(diags, e.Diags...)
	}
	f.printDiags(diags)
	if diags.HasErrors() || len(envs) == 0 {
		return nil, silentExit(exitError)
	}
	return f.checkLoaded(paths, envs[0].Model)
}

// checkLoaded refuses a configuration that declares nothing and warns about memory
// storage under --embedded.
func (f *Factory) checkLoaded(paths []string, m *model.Model) (*model.Model, error) {
	if m.Project == "" {
		// Any object declared without a natsplan block is a diagnostic above, so
		// nothing at all is declared: empty files, comments or variables only.
		return nil, &exitErr{Code: exitError, Err: emptyConfigError(paths, m.Files)}
	}
	if f.Global.Embedded != "" {
		warnEmbeddedMemory(f.IO.ErrOut, m)
	}
	return m, nil
}

// emptyConfigError refuses a configuration that declares nothing. It would plan no
// change and succeed, and in CI that is what a failed step that should have written
// the files (an artifact download, a generator) looks like.
func emptyConfigError(paths, files []string) error {
	const why = "natsplan refuses a configuration that declares nothing, because in CI it usually means the step that should have produced the files failed; " +
		"to manage no objects on purpose, write a natsplan { project = \"...\" } block alone"
	if len(paths) == 1 {
		if st, err := os.Stat(paths[0]); err == nil && st.Mode().IsRegular() {
			if st.Size() == 0 {
				return fmt.Errorf("%s is empty (0 bytes): it is neither a configuration nor a saved plan; %s", paths[0], why)
			}
			return fmt.Errorf("%s declares nothing (only comments, blank lines or variables); %s", paths[0], why)
		}
	}
	return fmt.Errorf("no configuration in %s: %s declare nothing (empty, or only comments or variables); %s",
		strings.Join(pathsOrDefault(paths), ", "), strings.Join(files, ", "), why)
}

func (f *Factory) printDiags(diags hcl.Diagnostics) {
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if f.loader != nil {
			files = f.loader.SourceFiles()
		}
		schema.WriteDiagnostics(f.IO.ErrOut, files, diags, f.ErrColor())
	}
}

// Session is a connection to the target server.
type Session struct {
	NC  *nats.Conn
	JS  *jsapi.Client
	URL string
	// Domain is the JetStream domain the session manages (--js-domain, the
	// context's or the environment's js_domain), "" for the connection's own.
	Domain string
	srv    *embedded.Server
	// closed is closed when the connection is, by nats.go's closed callback.
	closed chan struct{}
}

// Session connects to the server (or starts the embedded one) on first use.
func (f *Factory) Session(ctx context.Context) (*Session, error) {
	if f.session != nil {
		return f.session, nil
	}
	o := f.Global.Conn
	var err error
	if f.env != nil && f.Global.Embedded == "" {
		if o, err = f.envOptions(); err != nil {
			return nil, err
		}
		f.Global.Conn = o // the lock's JetStream domain, for one
	}
	if o.Timeout, err = f.Global.timeout(f.getenv); err != nil {
		return nil, err
	}
	// Only the flags conflict with --embedded: the flag is explicit, so it wins over an
	// ambient $NATS_URL or $NATS_CONTEXT, as every flag wins over its variable.
	if f.Global.Embedded != "" && (o.Server != "" || o.Context != "") {
		return nil, usageErr("--embedded runs its own server: drop --server/--context")
	}
	if f.env == nil {
		o.FromEnv(f.getenv)
	} else {
		// NATS_URL, NATS_CREDS, ... describe one server: an environment's own
		// settings decide. Its context (if it names one) is read where the nats CLI keeps them.
		envOnly := connect.Options{}
		envOnly.FromEnv(func(k string) string {
			if k == "XDG_CONFIG_HOME" || k == "HOME" {
				return f.getenv(k)
			}
			return ""
		})
		o.ConfigDir = envOnly.ConfigDir
		o.NoContext = o.Context == ""
	}
	o.DefaultServer = f.defaultServer
	if o.Name == "" {
		o.Name = "natsplan"
	}
	var srv *embedded.Server
	if f.Global.Embedded != "" {
		s, err := embedded.Start(embedded.Options{StoreDir: f.Global.Embedded})
		if err != nil {
			return nil, err
		}
		srv = s
		// The embedded server takes no credentials: no context, not even a selected one.
		o = connect.Options{Server: s.ClientURL(), Timeout: o.Timeout, Name: o.Name, NoContext: true}
	}
	// A denied request fails at once (the server does not answer it); other
	// asynchronous errors are printed once each.
	denials := jsapi.NewDenials(f.asyncError())
	// Nothing is buffered while the connection is down: a write is either sent on a
	// live connection or not at all, so "not sent" is certain and no write goes out
	// after apply gave up on it (or lost the lock).
	closed := make(chan struct{})
	nc, domain, err := connect.DialWith(ctx, o, nats.ErrorHandler(denials.Handle), nats.ReconnectWait(reconnectWait),
		nats.MaxReconnects(-1), nats.ReconnectBufSize(-1), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		if srv != nil {
			srv.Stop()
		}
		return nil, err
	}
	js := jsapi.New(nc, domain, o.Timeout)
	js.Denials = denials
	if f.Global.Trace {
		js.Trace = jsapi.NewTracer(f.IO.ErrOut)
		fmt.Fprintf(f.IO.ErrOut, "--- connected to %s (server %s), JetStream API %s.>\n", connect.Redact(nc.ConnectedUrlRedacted()), nc.ConnectedServerName(), js.Prefix)
	}
	f.session = &Session{NC: nc, JS: js, URL: nc.ConnectedUrlRedacted(), Domain: domain, srv: srv, closed: closed}
	return f.session, nil
}

// asyncError prints each distinct asynchronous error of the connection once.
func (f *Factory) asyncError() func(error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[err.Error()] {
			seen[err.Error()] = true
			fmt.Fprintf(f.IO.ErrOut, "natsplan: server reported: %v\n", err)
		}
	}
}

// drainWait bounds how long Close waits for the connection to drain.
const drainWait = time.Second

// Close closes the connection and stops the embedded server, if any.
func (f *Factory) Close() {
	if f.session == nil {
		return
	}
	// A connection that is down (the server went away) can not drain: close it now.
	// Otherwise wait for the drain, up to drainWait, then close what is left.
	switch err := f.session.NC.Drain(); {
	case err == nil:
		select {
		case <-f.session.closed:
		case <-time.After(drainWait): // what is left is closed below
		}
	case !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrConnectionReconnecting):
		fmt.Fprintf(f.IO.ErrOut, "natsplan: draining the connection: %v: closing it\n", err)
	}
	f.session.NC.Close()
	if f.session.srv != nil {
		f.session.srv.Stop()
	}
	f.session = nil
}

var errNoTTY = errors.New("apply needs confirmation: run it in a terminal, or pass --auto-approve (CI)")

func pathsOrDefault(args []string) []string {
	if len(args) == 0 {
		return []string{"."}
	}
	return args
}

// Format is the value of a command's --format flag.
type Format string

// The output formats; each command accepts some of them, text first.
const (
	formatText     Format = "text"
	formatJSON     Format = "json"
	formatMarkdown Format = "markdown"
	// status only
	formatPrometheus Format = "prometheus"
	// permissions only
	formatNATSServer Format = "nats-server"
	formatNSC        Format = "nsc"
)

// formatFlag declares --format with the formats the command accepts, the first the default.
func formatFlag(c *cobra.Command, p *Format, allowed ...Format) {
	names := formatNames(allowed)
	c.Flags().StringVar((*string)(p), "format", names[0], fmt.Sprintf("output format: %s", strings.Join(names, ", ")))
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
}

func formatNames(fs []Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

func checkFormat(v Format, allowed ...Format) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	names := formatNames(allowed)
	return usageErr("unknown --format %q: use one of %s", v, strings.Join(names, ", "))
}
