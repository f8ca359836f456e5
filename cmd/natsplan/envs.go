package main

// Environments (docs/environments.md): a configuration with environment "NAME" {}
// blocks is run against each selected environment, each with its own connection and
// its own desired model, several at once. The commands that reach servers share this
// orchestration:
//
//	runs, err := f.environments(ctx, paths)   // load once, select (--env), one child factory each
//	if runs == nil { ... the single-server command, unchanged ... }
//	err = forEachEnv(ctx, runs, func(ctx context.Context, r *envRun) error {
//		p, err := r.F.computePlan(ctx, paths)    // r.F.Load returns r's model
//		...
//	})
//	... render every run in declaration order (r.Out holds what r.F printed) ...
//	return envExit(runs, changed)
//
// A child factory reaches only its environment: its connection comes from the
// environment block (env("NAME") settings resolved when it connects), never from
// NATS_* or the nats CLI's selected context; its stdout is a buffer printed in order;
// its stderr lines are prefixed "[NAME] " and never show a resolved secret.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// envParallelism is how many environments a command runs at once.
const envParallelism = 4

// connFlagNames are the global flags that say how to reach the server. With
// environments the environment decides, so they are allowed only when --env selects
// exactly one environment, whose settings they then override.
var connFlagNames = []string{"server", "context", "creds", "nkey", "user", "password", "token",
	"tlscert", "tlskey", "tlsca", "tlsfirst", "jwt", "seed", "js-domain", "socks-proxy"}

// envFlag declares --env on a command that runs environments.
func envFlag(c *cobra.Command, f *Factory) {
	c.Flags().StringArrayVar(&f.Global.Envs, "env", nil,
		"run only the environments matching `NAME` (repeatable; globs such as 'prod-*'; default all)")
}

// envRun is one selected environment of a command: the factory that reaches it and
// how it ended.
type envRun struct {
	// Env is the environment block, with its target guard merged in.
	Env *model.Environment
	// Desired is the environment's desired model; F.Load returns it.
	Desired *model.Model
	// F is the environment's own factory: its own connection (and so its own lock),
	// stdout into Out, stderr prefixed "[NAME] ". forEachEnv closes it.
	F *Factory
	// Out is what F wrote to stdout, to print in the environment's section.
	Out *bytes.Buffer
	// Err is why the environment failed (unreachable, refused target, invalid
	// configuration there); nil when it succeeded. Print it with errText.
	Err error
	// Plan is the environment's plan, for the commands that compute one.
	Plan *plan.Plan

	errw *prefixWriter
}

// Name is the environment's name.
func (r *envRun) Name() string { return r.Env.Name }

// errText is the environment's error as one message, without any secret it resolved.
func (r *envRun) errText() string {
	if r.Err == nil {
		return ""
	}
	var e *exitErr
	msg := r.Err.Error()
	if errors.As(r.Err, &e) && e.Err == nil {
		msg = "stopped by the errors reported above on stderr (lines prefixed [" + r.Name() + "])"
	}
	return r.F.secrets.scrub(msg)
}

// environments loads the configuration and prepares one run per selected environment,
// in declaration order. It returns nil runs when the configuration declares no
// environment blocks (and --env is not given): the command then runs as it always has,
// on f, whose Load returns the model read here, if it was read.
//
// Diagnostics every environment has are printed once (an error among them fails the
// command); an environment's own are printed prefixed with its name and fail only it.
// A connection flag with more than one environment selected is a usage error.
func (f *Factory) environments(ctx context.Context, paths []string) ([]*envRun, error) {
	if len(f.Global.Envs) == 0 && !mayDeclareEnvironments(paths) {
		return nil, nil
	}
	f.loader = schema.NewLoader()
	envs, diags, err := f.loader.LoadEnvironments(ctx, paths, schema.Vars{Args: f.Global.Vars, Files: f.Global.VarFiles}, f.Global.Envs)
	if err != nil {
		return nil, err
	}
	if len(envs) > 0 && envs[0].Env == nil && len(f.Global.Envs) > 0 && !diags.HasErrors() {
		return nil, usageErr("--env %s: %s declares no environment blocks; drop --env, or declare environment \"NAME\" { ... } blocks (docs/environments.md)",
			f.Global.Envs[0], strings.Join(pathsOrDefault(paths), ", "))
	}
	if len(envs) == 0 || envs[0].Env == nil {
		for _, e := range envs {
			diags = append(diags, e.Diags...)
		}
		f.printDiags(diags)
		if diags.HasErrors() || len(envs) == 0 {
			return nil, silentExit(exitError)
		}
		m, err := f.checkLoaded(paths, envs[0].Model)
		if err != nil {
			return nil, err
		}
		f.desired = m
		return nil, nil
	}
	f.printDiags(diags)
	if diags.HasErrors() {
		return nil, silentExit(exitError)
	}
	if m := envs[0].Model; m.Project == "" && !envs[0].Diags.HasErrors() {
		return nil, &exitErr{Code: exitError, Err: emptyConfigError(paths, m.Files)}
	}
	if len(f.Global.connFlags) > 0 && len(envs) != 1 {
		names := make([]string, len(envs))
		for i, e := range envs {
			names[i] = e.Env.Name
		}
		return nil, usageErr("--%s sets the connection of one environment, but %d are selected (%s): the environments' own settings decide where each runs; select exactly one with --env NAME to override its settings",
			f.Global.connFlags[0], len(envs), strings.Join(names, ", "))
	}
	if f.Global.Embedded != "" {
		fmt.Fprintf(f.IO.ErrOut, "--embedded: each environment runs its own in-process server storing in %s; the environments' connection settings are not used.\n",
			filepath.Join(f.Global.Embedded, "<environment>"))
	}
	runs := make([]*envRun, len(envs))
	for i, e := range envs {
		runs[i] = f.newEnvRun(e)
		runs[i].F.printDiags(e.Diags)
		if e.Diags.HasErrors() {
			runs[i].Err = silentExit(exitError)
		}
	}
	return runs, nil
}

// envBlockLine finds the start of an environment block in a file: the word at the start
// of a line (or right after a comment), then a label.
var envBlockLine = regexp.MustCompile(`(?m)(^|\*/)[ \t]*environment([ \t]*"|[ \t]+[\pL_])`)

// mayDeclareEnvironments reports whether the files PATHs name may hold an environment
// block, without parsing them: a configuration without any is loaded while the server
// is read, as before environments existed, and one with some is loaded first, since
// the environments decide which servers to read. A wrong "yes" only costs that overlap.
func mayDeclareEnvironments(paths []string) bool {
	files, _, err := schema.Files(paths)
	if err != nil {
		return false // Load reports it
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err == nil && bytes.Contains(src, []byte("environment")) && envBlockLine.Match(src) {
			return true
		}
	}
	return false
}

// newEnvRun makes the run of one environment with its own factory.
func (f *Factory) newEnvRun(e *schema.EnvModel) *envRun {
	name := e.Env.Name
	secrets := &scrubber{}
	errw := &prefixWriter{w: f.IO.ErrOut, prefix: "[" + name + "] ", secrets: secrets}
	out := &bytes.Buffer{}
	io := &IOStreams{In: f.IO.In, Out: &lockedWriter{w: out}, ErrOut: errw,
		StdinTTY: f.IO.StdinTTY, StdoutTTY: f.IO.StdoutTTY,
		// Redrawn progress would mix with the other environments' lines.
		StderrTTY: false}
	g := *f.Global
	g.Envs = nil
	g.envTimeout = e.Env.Connection.Timeout
	if g.Embedded != "" {
		g.Embedded = filepath.Join(g.Embedded, name)
	}
	child := &Factory{IO: io, Global: &g, Stop: f.Stop, getenv: f.getenv, writing: f.writing,
		loader: f.loader, env: e.Env, desired: e.Model, secrets: secrets, only: f.only}
	return &envRun{Env: e.Env, Desired: e.Model, F: child, Out: out, errw: errw}
}

// envOptions are the connection options of the factory's environment: its settings,
// env("NAME") ones read now, under the connection flags given on the command line
// (environments allows those only with one environment selected).
func (f *Factory) envOptions() (connect.Options, error) {
	c := f.env.Connection
	var o connect.Options
	settings := []struct {
		name string
		dst  *string
		s    model.Setting
		flag string
		over string
	}{
		{"context", &o.Context, c.Context, "context", f.Global.Conn.Context},
		{"servers", &o.Server, c.Servers, "server", f.Global.Conn.Server},
		{"creds", &o.Creds, c.Creds, "creds", f.Global.Conn.Creds},
		{"nkey", &o.NKey, c.NKey, "nkey", f.Global.Conn.NKey},
		{"user", &o.User, c.User, "user", f.Global.Conn.User},
		{"password", &o.Password, c.Password, "password", f.Global.Conn.Password},
		{"token", &o.Token, c.Token, "token", f.Global.Conn.Token},
		{"tls cert", &o.TLSCert, c.TLSCert, "tlscert", f.Global.Conn.TLSCert},
		{"tls key", &o.TLSKey, c.TLSKey, "tlskey", f.Global.Conn.TLSKey},
		{"tls ca", &o.TLSCA, c.TLSCA, "tlsca", f.Global.Conn.TLSCA},
		{"js_domain", &o.JSDomain, c.JSDomain, "js-domain", f.Global.Conn.JSDomain},
	}
	given := map[string]bool{}
	for _, n := range f.Global.connFlags {
		given[n] = true
	}
	for _, st := range settings {
		secret := st.name == "password" || st.name == "token" || st.name == "servers"
		if given[st.flag] {
			*st.dst = st.over
			if secret {
				f.secrets.add(st.over, st.name == "servers")
			}
			continue
		}
		v, err := st.s.Resolve(f.getenv)
		if err != nil {
			return o, fmt.Errorf("setting %s: %w", st.name, err)
		}
		*st.dst = v
		if st.s.Env != "" || secret {
			f.secrets.add(v, st.name == "servers")
		}
	}
	o.TLSFirst = c.TLSFirst || f.Global.Conn.TLSFirst
	o.JWT, o.Seed, o.SocksProxy = f.Global.Conn.JWT, f.Global.Conn.Seed, f.Global.Conn.SocksProxy
	o.Timeout, o.Name = f.Global.Conn.Timeout, f.Global.Conn.Name
	o.Environment = f.env.Name
	return o, nil
}

// forEachEnv runs fn for every run that has not failed yet, envParallelism at a time,
// records what fn returns as the run's Err, and closes each run's factory when its fn
// returns. It returns ctx's error when the command was interrupted, so that the command
// exits as an interrupted one; otherwise nil: the runs carry their errors.
func forEachEnv(ctx context.Context, runs []*envRun, fn func(context.Context, *envRun) error) error {
	inParallel(len(runs), func(i int) {
		r := runs[i]
		if r.Err != nil {
			return
		}
		defer r.errw.flush()
		defer r.F.Close()
		if err := ctx.Err(); err != nil {
			r.Err = err
			return
		}
		r.Err = fn(ctx, r)
	})
	return ctx.Err()
}

// inParallel calls fn(0) .. fn(n-1), envParallelism at a time, and waits for all: the
// one bound on how many environments a command works on at once.
func inParallel(n int, fn func(i int)) {
	sem := make(chan struct{}, envParallelism)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// envExit is the exit of a command over environments: 1 when any environment failed,
// naming each with its error; else 2 when changed says some environment has changes
// (plan --detailed-exitcode, drift, status); else 0. changed may be nil.
func envExit(runs []*envRun, changed func(*envRun) bool) error {
	var failed []string
	for _, r := range runs {
		if r.Err != nil {
			failed = append(failed, fmt.Sprintf("environment %s: %s", r.Name(), r.errText()))
		}
	}
	switch {
	case len(failed) == 1:
		return &exitErr{Code: exitError, Err: errors.New(failed[0])}
	case len(failed) > 1:
		return &exitErr{Code: exitError, Err: fmt.Errorf("%d of %d environments failed:\n  %s", len(failed), len(runs), strings.Join(failed, "\n  "))}
	}
	if changed != nil {
		for _, r := range runs {
			if changed(r) {
				return silentExit(exitChanges)
			}
		}
	}
	return nil
}

// scrubber holds the secrets an environment's env() settings resolved to and hides
// them in text: a password or token that reached an error message (a URL parse error
// quotes the URL whole) is replaced, as is the user-info of server URLs.
type scrubber struct {
	mu     sync.Mutex
	values []string
}

// add records a resolved value: the whole value, and for server URLs the user-info
// and password part of each.
func (s *scrubber) add(v string, urls bool) {
	if s == nil || v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !urls {
		s.values = append(s.values, v)
		return
	}
	for _, u := range strings.Split(v, ",") {
		at := strings.LastIndex(u, "@")
		if at < 0 {
			continue
		}
		info := u[:at]
		if i := strings.Index(info, "://"); i >= 0 {
			info = info[i+3:]
		}
		s.values = append(s.values, info)
		if _, pass, ok := strings.Cut(info, ":"); ok && pass != "" {
			s.values = append(s.values, pass)
		}
	}
}

// scrub replaces every recorded secret in text.
func (s *scrubber) scrub(text string) string {
	if s == nil {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, "xxxxx")
	}
	return text
}

// prefixWriter writes whole lines to w, each prefixed (an environment's stderr), with
// the environment's secrets scrubbed. A last line without a newline waits for flush.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	secrets *scrubber
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	var out strings.Builder
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		out.WriteString(p.prefix)
		out.WriteString(p.secrets.scrub(strings.TrimSuffix(string(p.partial[:i]), "\r")))
		out.WriteByte('\n')
		p.partial = p.partial[i+1:]
	}
	if out.Len() > 0 {
		if _, err := io.WriteString(p.w, out.String()); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// flush writes a last line that has no newline.
func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.secrets.scrub(string(p.partial)))
		p.partial = nil
	}
}

// samePerEnvironment serves the commands that answer from the files alone
// (permissions, partition): it runs fn on the desired model of every selected
// environment, or on the one model of a configuration without environments. The
// answer may depend on an environment's values (a partition count, a JetStream
// domain), so it is written once when every environment gives the same one, and is
// otherwise a usage error that names which environments differ and asks for --env.
func (f *Factory) samePerEnvironment(ctx context.Context, paths []string, what string, fn func(ef *Factory, m *model.Model, w io.Writer) error) error {
	runs, err := f.environments(ctx, paths)
	if err != nil {
		return err
	}
	if runs == nil {
		m, err := f.Load(ctx, paths)
		if err != nil {
			return err
		}
		return fn(f, m, f.IO.Out)
	}
	outs := make([]string, len(runs))
	for i, r := range runs {
		if r.Err == nil {
			var b bytes.Buffer
			r.Err = fn(r.F, r.Desired, &b)
			outs[i] = b.String()
		}
		r.errw.flush()
		r.F.Close()
		if r.Err != nil {
			return fmt.Errorf("environment %s: %s", r.Name(), r.errText())
		}
	}
	var groups []string
	first := map[string]int{}
	for i, out := range outs {
		if j, ok := first[out]; ok {
			groups[j] += ", " + runs[i].Name()
			continue
		}
		first[out] = len(groups)
		groups = append(groups, runs[i].Name())
	}
	if len(groups) > 1 {
		return usageErr("the %s differs between environments (%s): pick one with --env NAME", what, strings.Join(groups, " | "))
	}
	_, err = io.WriteString(f.IO.Out, outs[0])
	return err
}

// jsDomain is the JetStream domain of the factory's target: --js-domain, else its
// environment's js_domain.
func (f *Factory) jsDomain() (string, error) {
	if f.Global.Conn.JSDomain != "" || f.env == nil {
		return f.Global.Conn.JSDomain, nil
	}
	d, err := f.env.Connection.JSDomain.Resolve(f.getenv)
	if err != nil {
		return "", fmt.Errorf("setting js_domain: %w", err)
	}
	return d, nil
}
