package schema

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/natsplan/natsplan/model"
)

// EnvModel is the desired model of one environment.
type EnvModel struct {
	// Env is the environment block; nil when the configuration declares none, and
	// then the one EnvModel is what Load returns. Its Expect is the merged guard, the
	// same as Model.Expect.
	Env   *model.Environment
	Model *model.Model
	// Diags are this environment's own diagnostics, each naming the environment.
	// Diagnostics that every selected environment has are returned once by
	// LoadEnvironments instead.
	Diags hcl.Diagnostics
}

// LoadEnvironments reads the configuration once and builds the desired model of
// every environment that selected names (path.Match globs; none selects all), each
// with its own values of the variables, several at once. A configuration without
// environment blocks yields one EnvModel with a nil Env, as Load would build it, and
// then selected must be empty.
//
// The models are in declaration order. The list is empty only when the
// configuration can not be read or the selection is wrong (a pattern that matches no
// environment, a selection without environment blocks); the diagnostics say why.
// A diagnostic that every selected environment has is returned once in the
// diagnostics; one that only some have is in those EnvModels' Diags, its Detail
// starting with `In environment "NAME": `. When ctx ends, LoadEnvironments stops soon
// after and returns ctx's error and nothing else.
func (l *Loader) LoadEnvironments(ctx context.Context, paths []string, vars Vars, selected []string) ([]*EnvModel, hcl.Diagnostics, error) {
	files, srcs, notes, diags, err := readConfig(ctx, paths)
	if err != nil {
		return nil, nil, err
	}
	if diags.HasErrors() {
		return nil, diags, nil
	}
	envs, diags, err := l.buildEnvironments(ctx, files, srcs, paths, vars, selected)
	l.keepSourceOnly()
	if err != nil {
		return nil, nil, err
	}
	return envs, append(notes, diags...), nil
}

// buildEnvironments is LoadEnvironments after reading the files: paths only name
// them in messages.
func (l *Loader) buildEnvironments(ctx context.Context, files []string, srcs [][]byte, paths []string, vars Vars, selected []string) ([]*EnvModel, hcl.Diagnostics, error) {
	p, err := l.parse(ctx, files, srcs)
	if err != nil {
		return nil, nil, fmt.Errorf("load configuration: %w", err)
	}
	common := p.diags
	if !p.declaredEnvs {
		if len(selected) > 0 {
			return nil, append(common, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No environments",
				Detail: fmt.Sprintf("--env selects environments, but %s declares none; remove --env, or declare environment \"NAME\" { ... } blocks.",
					strings.Join(defaultPaths(paths), ", "))}), nil
		}
		m, ds := decode(ctx, p, vars, nil, l.files)
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("load configuration: %w", err)
		}
		return []*EnvModel{{Model: m}}, append(common, ds...), nil
	}
	sel, ds := selectEnvironments(p.envs, selected)
	if ds.HasErrors() {
		return nil, append(common, ds...), nil
	}
	out, raw, err := l.decodeEnvironments(ctx, p, vars, sel)
	if err != nil {
		return nil, nil, err
	}
	shared, own := splitCommon(raw, sel)
	for i := range out {
		out[i].Diags = own[i]
	}
	return out, append(common, shared...), nil
}

// decodeEnvironments builds the model of each environment in sel, as many at once as
// there are processors. raw[i] holds all of environment i's diagnostics: its block's
// own, then its model's.
func (l *Loader) decodeEnvironments(ctx context.Context, p *parsedConfig, vars Vars, sel []*envBlock) ([]*EnvModel, []hcl.Diagnostics, error) {
	out := make([]*EnvModel, len(sel))
	raw := make([]hcl.Diagnostics, len(sel))
	files := make([]map[string]*hcl.File, len(sel))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, eb := range sel {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			files[i] = map[string]*hcl.File{}
			m, ds := decode(ctx, p, vars, eb, files[i])
			env := *eb.env
			env.Expect = m.Expect
			out[i] = &EnvModel{Env: &env, Model: m}
			raw[i] = append(slices.Clip(eb.diags), ds...)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("load configuration: %w", err)
	}
	for _, fs := range files {
		for name, f := range fs {
			l.files[name] = f
		}
	}
	return out, raw, nil
}

// selectEnvironments picks the environments the patterns match, in declaration
// order; no pattern picks all.
func selectEnvironments(envs []*envBlock, patterns []string) ([]*envBlock, hcl.Diagnostics) {
	if len(patterns) == 0 {
		return envs, nil
	}
	names := make([]string, len(envs))
	for i, e := range envs {
		names[i] = e.env.Name
	}
	declared := "it declares none that are valid"
	if len(names) > 0 {
		declared = "the configuration declares " + strings.Join(names, ", ")
	}
	var diags hcl.Diagnostics
	picked := make([]bool, len(envs))
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid --env pattern",
				Detail: fmt.Sprintf("--env %q is not a valid pattern: %s. Patterns use *, ? and [...], like --env 'prod-*'.", p, err)})
			continue
		}
		matched := false
		for i, n := range names {
			if ok, _ := path.Match(p, n); ok {
				picked[i], matched = true, true
			}
		}
		if !matched {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No such environment",
				Detail: fmt.Sprintf("--env %q matches no environment: %s.", p, declared)})
		}
	}
	var out []*envBlock
	for i, e := range envs {
		if picked[i] {
			out = append(out, e)
		}
	}
	return out, diags
}

// splitCommon returns the diagnostics every environment has (once, in the first
// environment's order) and each environment's others, naming it. Two diagnostics are
// the same when their severity, summary, detail and subject are.
func splitCommon(raw []hcl.Diagnostics, envs []*envBlock) (hcl.Diagnostics, []hcl.Diagnostics) {
	own := make([]hcl.Diagnostics, len(raw))
	if len(raw) == 0 {
		return nil, own
	}
	counts := make([]map[string]int, len(raw))
	for i, ds := range raw {
		counts[i] = map[string]int{}
		for _, d := range ds {
			counts[i][diagKey(d)]++
		}
	}
	shared := map[string]int{}
	for k, n := range counts[0] {
		for _, c := range counts[1:] {
			n = min(n, c[k])
		}
		if n > 0 {
			shared[k] = n
		}
	}
	var common hcl.Diagnostics
	for i, ds := range raw {
		used := map[string]int{}
		for _, d := range ds {
			k := diagKey(d)
			if used[k] < shared[k] {
				used[k]++
				if i == 0 {
					common = append(common, d)
				}
				continue
			}
			named := *d
			named.Detail = fmt.Sprintf("In environment %q: %s", envs[i].env.Name, d.Detail)
			own[i] = append(own[i], &named)
		}
	}
	return common, own
}

func diagKey(d *hcl.Diagnostic) string {
	var subject string
	if d.Subject != nil {
		r := d.Subject
		subject = fmt.Sprintf("%s:%d-%d", r.Filename, r.Start.Byte, r.End.Byte)
	}
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.Severity, d.Summary, d.Detail, subject)
}

// envBlock is one decoded environment block.
type envBlock struct {
	// env is the block as written; its Expect is the block's own expect, not merged.
	env    *model.Environment
	values []envValue
	// diags are the block's own diagnostics; they belong to this environment.
	diags hcl.Diagnostics
}

// envValue is one entry of an environment's variables = { ... }.
type envValue struct {
	name      string
	nameRange hcl.Range
	rng       hcl.Range // the value, where a value of the wrong type is reported
	val       cty.Value
}

// environmentName is what an environment may be called: it names a folder (--embedded
// DIR/<name>) and prefixes lines of output, so it is a plain token.
var environmentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// envVarName is a process environment variable name env() accepts.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var (
	environmentNames = []string{"context", "servers", "creds", "nkey", "user", "password", "token", "tls", "js_domain", "timeout", "variables", "expect"}
	tlsNames         = []string{"cert", "key", "ca", "handshake_first"}
	expectNames      = []string{"server", "cluster", "domain", "account"}
)

// environments decodes the environment blocks, checking their names; a block whose
// name is invalid or taken is reported and left out.
func (st *loadState) environments(blocks []*hclsyntax.Block) []*envBlock {
	var out []*envBlock
	folded := map[string]*hclsyntax.Block{}
	for _, b := range blocks {
		name := b.Labels[0]
		if !environmentName.MatchString(name) {
			st.errorf(b.LabelRanges[0], "Invalid environment name",
				"%q is not a valid environment name: use 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit "+
					"(the name becomes a folder name and prefixes output lines).", name)
			continue
		}
		if !st.unique("environment."+name, "environment", b.LabelRanges[0]) {
			continue
		}
		if first, ok := folded[strings.ToLower(name)]; ok {
			st.errorf(b.LabelRanges[0], "Duplicate environment",
				"environment %q differs from environment %q at %s only in case; environment names become folder names, "+
					"which some file systems do not tell apart by case, so rename one.", name, first.Labels[0], rangeString(first.LabelRanges[0]))
			continue
		}
		folded[strings.ToLower(name)] = b
		out = append(out, decodeEnvironment(b, st.inline))
	}
	return out
}

// envDecoder decodes one environment block. Its evaluation context has the functions
// and no variables: where an environment connects and its variables' values must be
// known before any variable is.
type envDecoder struct {
	*decoder
	name string
}

// decodeEnvironment decodes an environment block into its connection, its guard and
// its variables' values.
func decodeEnvironment(b *hclsyntax.Block, inline inlineBodies) *envBlock {
	e := &envDecoder{decoder: newDecoder(&hcl.EvalContext{Functions: functions()}, inline), name: b.Labels[0]}
	env := &model.Environment{Name: e.name}
	eb := &envBlock{env: env}
	c := &env.Connection
	seen := map[string]hcl.Range{}
	for _, it := range e.blockItems(b) {
		if !slices.Contains(environmentNames, it.name) {
			e.unknown(it, "environment", environmentNames)
			continue
		}
		if first, dup := seen[it.name]; dup {
			e.errorf(it.nameRange, "Duplicate argument", "%q is already set in this environment block at %s; set it once.", it.name, rangeString(first))
			continue
		}
		seen[it.name] = it.rng
		nested := it.name == "tls" || it.name == "expect" || it.name == "variables"
		if it.block != nil && !nested {
			e.errorf(it.nameRange, "Unsupported block type", "%q is an argument, not a block, in an environment block: write %s = <value>.", it.name, it.name)
			continue
		}
		var ok bool
		switch it.name {
		case "context":
			c.Context, ok = e.setting(it, it.name)
		case "servers":
			c.Servers, ok = e.servers(it)
		case "creds":
			c.Creds, ok = e.setting(it, it.name)
		case "nkey":
			c.NKey, ok = e.setting(it, it.name)
		case "user":
			c.User, ok = e.setting(it, it.name)
		case "password", "token":
			var s model.Setting
			if s, ok = e.secret(it); it.name == "password" {
				c.Password = s
			} else {
				c.Token = s
			}
		case "js_domain":
			c.JSDomain, ok = e.setting(it, it.name)
		case "timeout":
			ok = e.timeout(it, c)
		case "tls":
			ok = e.tls(it, c)
		case "expect":
			env.Expect, ok = e.expect(it)
		case "variables":
			eb.values, ok = e.variables(it)
		}
		if ok {
			e.fields[it.name] = it.rng
		}
	}
	env.Decl = &model.Decl{Range: b.DefRange(), Fields: e.fields}
	if env.Expect != nil {
		env.Expect.Decl = subDecl(e.fields, "expect")
	}
	eb.diags = e.diags
	return eb
}

// unknown reports a name that an environment block or one of its nested blocks does not hold.
func (e *envDecoder) unknown(it item, where string, names []string) {
	if it.block != nil {
		e.errorf(it.nameRange, "Unsupported block type",
			"Blocks of type %q are not expected in %s block.%s It holds %s.", it.name, article(where), didYouMean(it.name, names), strings.Join(names, ", "))
		return
	}
	e.errorf(it.nameRange, "Unsupported argument",
		"An argument named %q is not expected in %s block.%s It holds %s.", it.name, article(where), didYouMean(it.name, names), strings.Join(names, ", "))
}

func article(what string) string {
	if strings.ContainsRune("aeiou", rune(what[0])) {
		return "an " + what
	}
	return "a " + what
}

// secretf reports an error about a secret written in a file. WriteDiagnostics prints
// its position but not its source line, which holds the secret.
func (e *envDecoder) secretf(subject hcl.Range, format string, args ...any) {
	r := subject
	e.diags = append(e.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Secret written in a file",
		Detail: fmt.Sprintf(format, args...), Subject: &r, Extra: secretSource{}})
}

// secretSource marks a diagnostic whose source line holds a secret.
type secretSource struct{}

// suggest is an environment variable name for one of the environment's secrets.
func (e *envDecoder) suggest(what string) string {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, e.name)
	if n[0] >= '0' && n[0] <= '9' {
		n = "ENV_" + n
	}
	return n + "_NATS_" + strings.ToUpper(what)
}

// nested lists the items of a block or an object attribute (tls, expect, variables).
func (e *envDecoder) nested(it item) ([]item, bool) {
	if it.block != nil {
		if len(it.block.Labels) > 0 {
			e.errorf(it.block.LabelRanges[0], "Extraneous label", "A %s block takes no labels; remove %q.", it.name, it.block.Labels[0])
			return nil, false
		}
		return e.blockItems(it.block), true
	}
	if _, literal := it.expr.(*hclsyntax.ObjectConsExpr); !literal && !e.noVariables(it.expr, it.name) {
		return nil, false
	}
	return e.exprItems(it.expr, it.name)
}

// noVariables refuses var. and local. in an environment block.
func (e *envDecoder) noVariables(expr hcl.Expression, what string) bool {
	vars := expr.Variables()
	if len(vars) == 0 {
		return true
	}
	e.errorf(vars[0].SourceRange(), "Variables not allowed",
		"%s in an environment block can not refer to var. or local.: which server an environment is and the values of its variables "+
			"are known before any variable is. Write the value here, or env(\"NAME\") for a string setting read from the process environment when natsplan connects.", what)
	return false
}

// unwrap returns the expression inside parentheses and a template of one interpolation ("${env("X")}").
func unwrap(expr hcl.Expression) hcl.Expression {
	for {
		switch x := expr.(type) {
		case *hclsyntax.TemplateWrapExpr:
			expr = x.Wrapped
		case *hclsyntax.ParenthesesExpr:
			expr = x.Expression
		default:
			return expr
		}
	}
}

// envCall returns expr as a call of env(), or nil.
func envCall(expr hcl.Expression) *hclsyntax.FunctionCallExpr {
	if call, ok := unwrap(expr).(*hclsyntax.FunctionCallExpr); ok && call.Name == "env" {
		return call
	}
	return nil
}

// envRef decodes env("NAME") into a reference to the process environment variable.
func (e *envDecoder) envRef(call *hclsyntax.FunctionCallExpr) (model.Setting, bool) {
	if len(call.Args) != 1 || call.ExpandFinal {
		e.errorf(call.Range(), "Invalid env() call",
			"env takes one argument, the name of a process environment variable in quotes: env(\"NATS_PASSWORD\").")
		return model.Setting{}, false
	}
	name, ok := literalString(call.Args[0])
	if !ok {
		e.errorf(call.Args[0].Range(), "Invalid env() call",
			"env() takes the environment variable's name as a literal string, like env(\"NATS_PASSWORD\"): "+
				"the name is kept and the variable read when natsplan connects, so it can not be computed.")
		return model.Setting{}, false
	}
	if !envVarName.MatchString(name) {
		e.errorf(call.Args[0].Range(), "Invalid env() call",
			"%q is not an environment variable name: use letters, digits and '_', not starting with a digit.", name)
		return model.Setting{}, false
	}
	return model.Setting{Env: name}, true
}

// literalString is the value of a string literal without interpolations.
func literalString(expr hcl.Expression) (string, bool) {
	if t, ok := expr.(*hclsyntax.TemplateExpr); ok {
		if len(t.Parts) != 1 {
			return "", false
		}
		expr = t.Parts[0]
	}
	lit, ok := expr.(*hclsyntax.LiteralValueExpr)
	if !ok || lit.Val.Type() != cty.String || lit.Val.IsNull() {
		return "", false
	}
	return lit.Val.AsString(), true
}

// setting decodes a string setting: env("NAME"), or a string written in the file.
func (e *envDecoder) setting(it item, path string) (model.Setting, bool) {
	if call := envCall(it.expr); call != nil {
		return e.envRef(call)
	}
	if !e.noVariables(it.expr, path) {
		return model.Setting{}, false
	}
	v, ok := e.eval(it.expr)
	if !ok {
		return model.Setting{}, false
	}
	s, ok := e.toString(v, path, it.expr.Range())
	if !ok {
		return model.Setting{}, false
	}
	if s == "" {
		e.errorf(it.expr.Range(), "Empty setting", "%s is empty: set a value, or remove it.", path)
		return model.Setting{}, false
	}
	switch path {
	case "nkey":
		if looksLikeSeed(s) {
			e.secretf(it.expr.Range(), "nkey is the path of the file that holds the seed, not the seed: a seed never goes in a configuration file. "+
				"Write nkey = \"/path/to/seed.nk\", or nkey = env(\"%s\") naming a variable that holds the path.", e.suggest("nkey"))
			return model.Setting{}, false
		}
	case "creds":
		if strings.Contains(s, "-----BEGIN") || strings.Contains(s, "\n") {
			e.secretf(it.expr.Range(), "creds is the path of a credentials file, not its content: credentials never go in a configuration file. "+
				"Write creds = \"/path/to/user.creds\", or creds = env(\"%s\") naming a variable that holds the path.", e.suggest("creds"))
			return model.Setting{}, false
		}
	}
	return model.Setting{Literal: s}, true
}

// looksLikeSeed reports whether s is an nkey seed (58 characters of base32 starting with S).
func looksLikeSeed(s string) bool {
	if len(s) != 58 || s[0] != 'S' {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// secret decodes password or token, which may only be env("NAME").
func (e *envDecoder) secret(it item) (model.Setting, bool) {
	if call := envCall(it.expr); call != nil {
		return e.envRef(call)
	}
	v := e.suggest(it.name)
	e.secretf(it.expr.Range(), "a %s is never written in a configuration file, which is committed, shared and printed, nor taken from var. or local.: "+
		"write %s = env(\"%s\") and set %s in the process environment where natsplan runs; natsplan reads it when it connects and never prints it.",
		it.name, it.name, v, v)
	return model.Setting{}, false
}

// servers decodes servers: a list of URLs, one string of comma-separated URLs, or
// env("NAME") holding such a string. A URL may not carry credentials.
func (e *envDecoder) servers(it item) (model.Setting, bool) {
	if call := envCall(it.expr); call != nil {
		return e.envRef(call)
	}
	if !e.noVariables(it.expr, "servers") {
		return model.Setting{}, false
	}
	type server struct {
		url string
		rng hcl.Range
	}
	var list []server
	if tc, ok := unwrap(it.expr).(*hclsyntax.TupleConsExpr); ok {
		for _, el := range tc.Exprs {
			if envCall(el) != nil {
				e.errorf(el.Range(), "Invalid servers",
					"env() can not be one element of servers: write servers = env(\"NAME\") with the comma-separated URLs in the variable, or list the URLs here.")
				return model.Setting{}, false
			}
			v, ok := e.eval(el)
			if !ok {
				return model.Setting{}, false
			}
			s, ok := e.toString(v, "servers", el.Range())
			if !ok {
				return model.Setting{}, false
			}
			list = append(list, server{s, el.Range()})
		}
	} else {
		v, ok := e.eval(it.expr)
		if !ok {
			return model.Setting{}, false
		}
		switch {
		case v.Type() == cty.String:
			for u := range strings.SplitSeq(v.AsString(), ",") {
				list = append(list, server{u, it.expr.Range()})
			}
		case v.CanIterateElements() && !v.Type().IsObjectType() && !v.Type().IsMapType():
			for iter := v.ElementIterator(); iter.Next(); {
				_, ev := iter.Element()
				s, ok := e.toString(ev, "servers", it.expr.Range())
				if !ok {
					return model.Setting{}, false
				}
				list = append(list, server{s, it.expr.Range()})
			}
		default:
			e.errorf(it.expr.Range(), "Incorrect attribute value type",
				"servers is a list of URLs, like [\"nats://a:4222\", \"nats://b:4222\"], or one string of comma-separated URLs.")
			return model.Setting{}, false
		}
	}
	if len(list) == 0 {
		e.errorf(it.expr.Range(), "Empty setting", "servers lists no URL: list at least one, or remove servers.")
		return model.Setting{}, false
	}
	urls := make([]string, 0, len(list))
	for i, s := range list {
		u := strings.TrimSpace(s.url)
		problem, secret := checkServerURL(u)
		if secret {
			e.secretf(s.rng, "server %d of servers has credentials in its URL (user:password@ or token@): secrets never go in a configuration file. "+
				"List the URL without them, and write user = \"NAME\" with password = env(\"%s\"), or token = env(\"%s\").",
				i+1, e.suggest("password"), e.suggest("token"))
			return model.Setting{}, false
		}
		if problem != "" {
			e.errorf(s.rng, "Invalid server URL", "server %d of servers: %s.", i+1, problem)
			return model.Setting{}, false
		}
		urls = append(urls, u)
	}
	return model.Setting{Literal: strings.Join(urls, ",")}, true
}

// checkServerURL checks one server URL as the NATS client reads it (a missing scheme
// is nats://). It returns what is wrong, without echoing a URL that may hold a
// secret, and whether the URL holds credentials.
func checkServerURL(u string) (problem string, secret bool) {
	if u == "" {
		return "it is empty (a stray comma?)", false
	}
	full := u
	if !strings.Contains(u, "://") {
		full = "nats://" + u
	}
	pu, err := url.Parse(full)
	if err != nil {
		if strings.Contains(u, "@") {
			return "", true
		}
		return fmt.Sprintf("%q is not a URL", u), false
	}
	if pu.User != nil {
		return "", true
	}
	switch pu.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Sprintf("%q has the scheme %q; use nats://, tls://, ws:// or wss://", u, pu.Scheme), false
	}
	if pu.Hostname() == "" {
		return fmt.Sprintf("%q names no host", u), false
	}
	return "", false
}

// timeout decodes timeout, a positive duration written in the file.
func (e *envDecoder) timeout(it item, c *model.Connection) bool {
	if envCall(it.expr) != nil {
		e.errorf(it.expr.Range(), "Invalid timeout", "timeout is a duration written here, like timeout = \"10s\"; env() is for string settings.")
		return false
	}
	if !e.noVariables(it.expr, "timeout") {
		return false
	}
	v, ok := e.eval(it.expr)
	if !ok {
		return false
	}
	d, ok := e.duration(v, "timeout", it.expr.Range())
	if !ok {
		return false
	}
	if d.(int64) <= 0 {
		e.errorf(it.expr.Range(), "Invalid timeout", "timeout must be longer than 0; remove it to use --timeout, $NATS_TIMEOUT or the default.")
		return false
	}
	c.Timeout = time.Duration(d.(int64))
	return true
}

// tls decodes tls { cert key ca handshake_first }.
func (e *envDecoder) tls(it item, c *model.Connection) bool {
	items, ok := e.nested(it)
	if !ok {
		return false
	}
	for _, t := range e.arguments(items, "tls", "a tls block", tlsNames) {
		var ok bool
		switch t.name {
		case "cert":
			c.TLSCert, ok = e.setting(t, "tls.cert")
		case "key":
			c.TLSKey, ok = e.setting(t, "tls.key")
		case "ca":
			c.TLSCA, ok = e.setting(t, "tls.ca")
		case "handshake_first":
			ok = e.noVariables(t.expr, "tls.handshake_first")
			if ok {
				var v cty.Value
				if v, ok = e.eval(t.expr); ok {
					if v.Type() != cty.Bool {
						e.errorf(t.expr.Range(), "Incorrect attribute value type", "tls.handshake_first must be true or false.")
						ok = false
					} else {
						c.TLSFirst = v.True()
					}
				}
			}
		}
		if ok {
			e.fields["tls."+t.name] = t.rng
		}
	}
	return true
}

// arguments are the items of the nested block `block` that are known, set once and
// written as arguments (name = value); the others are reported.
func (e *envDecoder) arguments(items []item, block, inA string, names []string) []item {
	var out []item
	seen := map[string]hcl.Range{}
	for _, t := range items {
		if !slices.Contains(names, t.name) {
			e.unknown(t, block, names)
			continue
		}
		if first, dup := seen[t.name]; dup {
			e.errorf(t.nameRange, "Duplicate argument", "%q is already set in this %s block at %s; set it once.", t.name, block, rangeString(first))
			continue
		}
		seen[t.name] = t.rng
		if t.block != nil {
			e.errorf(t.nameRange, "Unsupported block type", "%q is an argument, not a block, in %s: write %s = <value>.", t.name, inA, t.name)
			continue
		}
		out = append(out, t)
	}
	return out
}

// expect decodes the environment's expect { server cluster domain account }.
func (e *envDecoder) expect(it item) (*model.Expect, bool) {
	items, ok := e.nested(it)
	if !ok {
		return nil, false
	}
	x := &model.Expect{}
	for _, t := range e.arguments(items, "expect", "an expect block", expectNames) {
		if envCall(t.expr) != nil {
			e.errorf(t.expr.Range(), "Invalid expect", "expect.%s is what the target must be, written here; env() is for connection settings.", t.name)
			continue
		}
		if !e.noVariables(t.expr, "expect."+t.name) {
			continue
		}
		v, ok := e.eval(t.expr)
		if !ok {
			continue
		}
		s, ok := e.toString(v, "expect."+t.name, t.expr.Range())
		if !ok {
			continue
		}
		switch t.name {
		case "server":
			x.Server = s
		case "cluster":
			x.Cluster = s
		case "domain":
			x.Domain = s
		case "account":
			x.Account = s
		}
		e.fields["expect."+t.name] = t.rng
	}
	return x, true
}

// variables decodes variables = { NAME = value }: the environment's values of the
// configuration's variables, checked against them when each model is built.
func (e *envDecoder) variables(it item) ([]envValue, bool) {
	items, ok := e.nested(it)
	if !ok {
		return nil, false
	}
	var out []envValue
	seen := map[string]hcl.Range{}
	for _, t := range items {
		if t.block != nil {
			e.errorf(t.nameRange, "Unsupported block type", "variables holds NAME = value pairs, one per variable.")
			continue
		}
		if first, dup := seen[t.name]; dup {
			e.errorf(t.nameRange, "Duplicate variable value", "%q is already set in these variables at %s; set it once.", t.name, rangeString(first))
			continue
		}
		seen[t.name] = t.rng
		if envCall(t.expr) != nil {
			e.errorf(t.expr.Range(), "Invalid variable value",
				"variables.%s is written here: env() is for connection settings. To take a variable's value from outside, use --var or --var-file.", t.name)
			continue
		}
		if !e.noVariables(t.expr, "variables."+t.name) {
			continue
		}
		v, diags := t.expr.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() || v.IsNull() {
			continue
		}
		out = append(out, envValue{name: t.name, nameRange: t.nameRange, rng: t.expr.Range(), val: v})
		e.fields["variables."+t.name] = t.rng
	}
	return out, true
}

// mergeExpect is the natsplan block's expect with the environment's fields over it:
// a field the environment writes replaces the natsplan block's, even with "".
func mergeExpect(base *model.Expect, env *envBlock) *model.Expect {
	own := env.env.Expect
	if own == nil {
		return base
	}
	m := &model.Expect{Decl: &model.Decl{Range: own.Decl.Range, Fields: map[string]hcl.Range{}}}
	if base != nil {
		m.Server, m.Cluster, m.Domain, m.Account = base.Server, base.Cluster, base.Domain, base.Account
		if base.Decl != nil {
			for k, r := range base.Decl.Fields {
				m.Decl.Fields[k] = r
			}
		}
	}
	for k, r := range own.Decl.Fields {
		m.Decl.Fields[k] = r
		switch k {
		case "server":
			m.Server = own.Server
		case "cluster":
			m.Cluster = own.Cluster
		case "domain":
			m.Domain = own.Domain
		case "account":
			m.Account = own.Account
		}
	}
	return m
}
