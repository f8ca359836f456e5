// Package schema is the natsplan language: it reads HCL files into the desired
// model.Model, checking every block, attribute and value on the way, and formats files.
package schema

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/natsplan/natsplan/model"
)

// Loader loads configurations and keeps the parsed files, so that diagnostics can
// be printed with their source lines.
type Loader struct {
	files map[string]*hcl.File
}

// NewLoader returns a loader with an empty file cache.
func NewLoader() *Loader { return &Loader{files: map[string]*hcl.File{}} }

// SourceFiles returns every file the loader parsed (configurations and var-files),
// keyed by name, for WriteDiagnostics. Once a load has ended they hold their source
// bytes only: see keepSourceOnly.
func (l *Loader) SourceFiles() map[string]*hcl.File { return l.files }

// keepSourceOnly drops the syntax trees of the files a load parsed, once the model is
// built from them: diagnostics print source lines from the bytes alone, and at 30,000
// blocks the trees were 53 MB of a plan's live heap (BENCHMARKS.md, Memory).
func (l *Loader) keepSourceOnly() {
	for name, f := range l.files {
		if f != nil && f.Body != nil {
			l.files[name] = &hcl.File{Bytes: f.Bytes}
		}
	}
}

// Load reads PATHs (files, or folders = all *.hcl in it, not recursive; none = ".") into the desired model.
func Load(paths []string, vars Vars) (*model.Model, hcl.Diagnostics) {
	return NewLoader().Load(paths, vars)
}

// Load reads PATHs into the desired model; see the package-level Load.
func (l *Loader) Load(paths []string, vars Vars) (*model.Model, hcl.Diagnostics) {
	m, diags, _ := l.LoadContext(context.Background(), paths, vars) // a background context never ends
	return m, diags
}

// LoadContext is Load that stops soon after ctx ends, between files and between
// blocks, and then returns ctx's error and no model: loading thousands of blocks is
// seconds of CPU that an interrupted command does not wait for. A file being parsed
// then is abandoned (see parseFiles).
//
// A configuration with environment blocks is loaded as LoadEnvironments loads it with
// no selection: every environment's model is built, and the diagnostics returned are
// all of them (those of one environment name it). The model returned is then the
// first environment's, in declaration order; use LoadEnvironments to get each.
func (l *Loader) LoadContext(ctx context.Context, paths []string, vars Vars) (*model.Model, hcl.Diagnostics, error) {
	envs, diags, err := l.LoadEnvironments(ctx, paths, vars, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(envs) == 0 {
		return model.New(), diags, nil
	}
	for _, e := range envs {
		diags = append(diags, e.Diags...)
	}
	return envs[0].Model, diags, nil
}

// readConfig lists and reads the files PATHs name. Diagnostics with errors mean
// there is nothing to load; notes are warnings to report with whatever loads.
func readConfig(ctx context.Context, paths []string) (files []string, srcs [][]byte, notes, diags hcl.Diagnostics, err error) {
	files, skipped, err := Files(paths)
	if err != nil {
		return nil, nil, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read configuration", Detail: err.Error()}}, nil
	}
	notes = SkippedDiagnostics(skipped)
	if len(files) == 0 {
		return nil, nil, nil, append(notes, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No configuration files",
			Detail: fmt.Sprintf("No *.hcl files in %s; name a file or a folder that holds them.", strings.Join(defaultPaths(paths), ", "))}), nil
	}
	srcs = make([][]byte, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("load configuration: %w", err)
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read configuration",
				Detail: fmt.Sprintf("read %s: %s", f, err)}}, nil
		}
		srcs[i] = src
	}
	return files, srcs, notes, nil, nil
}

// parsedFile is the outcome of parsing one file.
type parsedFile struct {
	file   *hcl.File
	diags  hcl.Diagnostics
	inline inlineBodies
}

// parseFiles parses the files, several at once: parsing is most of loading a large
// configuration and each file parses on its own. The results are in file order, so
// what load reports does not depend on which finished first.
//
// The parser can not be interrupted, and one large file takes seconds, so when ctx
// ends parseFiles returns ctx's error at once and leaves the files being parsed to
// finish in the background, unread; files not yet started are not parsed.
func parseFiles(ctx context.Context, files []string, srcs [][]byte) ([]parsedFile, error) {
	out := make([]parsedFile, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, name := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			inline := inlineBodies{}
			f, ds := parseConfig(srcs[i], name, inline, true)
			out[i] = parsedFile{file: f, diags: ds, inline: inline}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return out, ctx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func defaultPaths(paths []string) []string {
	if len(paths) == 0 {
		return []string{"."}
	}
	return paths
}

// Files lists the .hcl files PATHs name, in the order Load reads them, and the
// folders named like one (x.hcl/) that it skipped, since folders are not read
// recursively. A file reached twice, by its name and through a symbolic link, is
// listed once.
func Files(paths []string) (files, skipped []string, err error) {
	seen := map[string]bool{}
	add := func(f string) {
		key := f
		if real, err := filepath.EvalSymlinks(f); err == nil {
			key = real
		}
		if !seen[key] {
			seen[key] = true
			files = append(files, f)
		}
	}
	for _, p := range defaultPaths(paths) {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read configuration %s: %w", p, err)
		}
		if !st.IsDir() {
			add(filepath.Clean(p))
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read configuration folder %s: %w", p, err)
		}
		for _, e := range entries { // ReadDir sorts by name
			if !strings.HasSuffix(e.Name(), ".hcl") {
				continue
			}
			name := filepath.Join(p, e.Name())
			// A link to a file counts as that file; e.IsDir does not follow links.
			if st, err := os.Stat(name); err == nil && st.IsDir() {
				skipped = append(skipped, name)
				continue
			}
			add(name)
		}
	}
	return files, skipped, nil
}

// SkippedDiagnostics warns about the folders Files skipped: a folder named x.hcl looks
// like a file that was read.
func SkippedDiagnostics(skipped []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, d := range skipped {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Folder skipped",
			Detail: fmt.Sprintf("%s is a folder, not a file: folders are not read recursively. Name it as a PATH to read the .hcl files in it.", d)})
	}
	return diags
}

// blockLabels is the label each top-level block type takes, for the usage hint.
var blockLabels = map[string][]string{
	"natsplan":        nil,
	"environment":     {"NAME"},
	"variable":        {"NAME"},
	"locals":          nil,
	"stream":          {"NAME"},
	"consumer":        {"STREAM", "NAME"},
	"subject_mapping": {"NAME"},
	"consumer_group":  {"NAME"},
	"kv":              {"BUCKET"},
	"object_store":    {"BUCKET"},
	"service":         {"NAME"},
}

// topLevel lists the top-level block types in the order the docs present them.
var topLevel = []string{"natsplan", "environment", "variable", "locals", "stream", "consumer", "subject_mapping", "consumer_group", "kv", "object_store", "service"}

// loadState is one Load in progress.
type loadState struct {
	m      *model.Model
	ctx    *hcl.EvalContext
	inline inlineBodies
	diags  hcl.Diagnostics
	// projectWritten is set when the natsplan block has a project attribute at all.
	projectWritten bool
	// declared records the first declaration of each address, for duplicate errors.
	declared map[string]hcl.Range
	// streamSpec and consumerSpec are built once per load: a configuration holds
	// thousands of these blocks, and building the tables was a fifth of decoding them.
	// Decoding only reads them.
	streamSpec, consumerSpec *objectSpec
	// items is the slice blockItems reuses.
	items []item
}

// parsedConfig is a configuration read once: its files parsed, its top-level blocks
// sorted by kind, its variable and environment blocks decoded. decode builds a model
// from it as many times as there are environments, concurrently: nothing in it is
// written after parse returns.
type parsedConfig struct {
	files  []string
	inline inlineBodies
	// diags are what parsing and the blocks decoded once reported, in file order.
	diags    hcl.Diagnostics
	vars     map[string]*variable
	order    []string
	locals   []*hclsyntax.Attribute
	natsplan []*hclsyntax.Block
	objects  []*hclsyntax.Block
	// envs are the valid environment blocks in declaration order; declaredEnvs is
	// whether any environment block was written at all (valid or not).
	envs         []*envBlock
	declaredEnvs bool
}

// load decodes the given sources as LoadContext does, every environment included. It
// is LoadContext without the file system, for fuzzing. When ctx ends it stops early
// and returns nothing.
func (l *Loader) load(ctx context.Context, files []string, srcs [][]byte, in Vars) (*model.Model, hcl.Diagnostics) {
	envs, diags, err := l.buildEnvironments(ctx, files, srcs, files, in, nil)
	if err != nil || len(envs) == 0 {
		return model.New(), diags
	}
	for _, e := range envs {
		diags = append(diags, e.Diags...)
	}
	return envs[0].Model, diags
}

// parse parses the files and sorts their top-level blocks; it decodes the blocks that
// do not depend on the values of variables (variable and environment blocks) once.
func (l *Loader) parse(ctx context.Context, files []string, srcs [][]byte) (*parsedConfig, error) {
	parsed, err := parseFiles(ctx, files, srcs)
	if err != nil {
		return nil, err
	}
	p := &parsedConfig{files: files, inline: inlineBodies{}, vars: map[string]*variable{}}
	// st only reports and records names: the blocks decoded here need no variables.
	st := &loadState{m: model.New(), declared: map[string]hcl.Range{}, inline: p.inline,
		ctx: &hcl.EvalContext{Functions: functions(), Variables: map[string]cty.Value{}}}
	var envs []*hclsyntax.Block
	for i, name := range files {
		f, ds := parsed[i].file, parsed[i].diags
		maps.Copy(p.inline, parsed[i].inline)
		if f != nil {
			l.files[name] = f
		}
		st.diags = append(st.diags, ds...)
		if ds.HasErrors() || f == nil {
			continue // a file that does not parse is reported once, not decoded
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, a := range sortedSyntaxAttrs(body.Attributes) {
			st.errorf(a.NameRange, "Unsupported argument",
				"%q cannot be set at the top level of a file, which holds only blocks: %s.", a.Name, strings.Join(topLevel, ", "))
		}
		for _, b := range body.Blocks {
			if b.Type == "environment" {
				p.declaredEnvs = true
			}
			if !st.labels(b) {
				continue
			}
			switch b.Type {
			case "variable":
				v, ds := decodeVariable(b, st.ctx, st.inline)
				st.diags = append(st.diags, ds...)
				if st.unique("var."+v.name, "variable", b.LabelRanges[0]) {
					p.vars[v.name] = v
					p.order = append(p.order, v.name)
				}
			case "locals":
				if _, ok := st.inline[b]; ok {
					st.errorf(b.OpenBraceRange, "Invalid locals block", "Write one NAME = value per line in a locals block.")
					continue
				}
				for _, it := range bodyItems(b.Body) {
					if it.block != nil {
						st.errorf(it.nameRange, "Unsupported block type", "A locals block holds only NAME = value attributes.")
						continue
					}
					p.locals = append(p.locals, b.Body.Attributes[it.name])
				}
			case "natsplan":
				p.natsplan = append(p.natsplan, b)
			case "environment":
				envs = append(envs, b)
			default:
				p.objects = append(p.objects, b)
			}
		}
	}
	p.envs = st.environments(envs)
	p.diags = st.diags
	return p, nil
}

// decode builds the model of a parsed configuration with the variables' values from
// env (nil: no environment) and in. It only reads p, so several decodes of one p may
// run at once; var-files it reads are added to files, which must then be its own.
func decode(ctx context.Context, p *parsedConfig, in Vars, env *envBlock, files map[string]*hcl.File) (*model.Model, hcl.Diagnostics) {
	// The maps every block adds to are sized for the blocks, not grown as they come.
	st := &loadState{m: model.New(), declared: make(map[string]hcl.Range, len(p.objects)), inline: p.inline,
		ctx:          &hcl.EvalContext{Functions: functions(), Variables: map[string]cty.Value{}},
		streamSpec:   streamSpec().with(lifecycleSpec(false)),
		consumerSpec: consumerSpec().with(lifecycleSpec(true), deadLetterSpec())}
	var streams, consumers int
	for _, b := range p.objects {
		switch b.Type {
		case "stream":
			streams++
		case "consumer":
			consumers++
		}
	}
	st.m.Streams = make(map[string]*model.Stream, streams)
	st.m.Consumers = make(map[model.ConsumerKey]*model.Consumer, consumers)
	st.m.Files = slices.Clone(p.files) // each model its own: a caller may append
	var envVals []envValue
	if env != nil {
		envVals = env.values
	}
	vals, ds := resolveVariables(p.vars, p.order, envVals, in, files, st.ctx)
	st.diags = append(st.diags, ds...)
	for _, name := range p.order {
		if _, ok := vals[name]; !ok {
			vals[name] = cty.DynamicVal // already reported; uses stay quiet
		}
	}
	st.ctx.Variables["var"] = cty.ObjectVal(vals)
	st.diags = append(st.diags, evalLocals(p.locals, st.ctx)...)

	for i, b := range p.natsplan {
		if i > 0 {
			st.errorf(b.DefRange(), "Duplicate natsplan block",
				"natsplan is already configured at %s; keep one natsplan block per configuration.", rangeString(p.natsplan[0].DefRange()))
			continue
		}
		st.natsplan(b)
	}
	if env != nil {
		st.m.Expect = mergeExpect(st.m.Expect, env)
	}
	for _, b := range p.objects {
		if ctx.Err() != nil {
			return st.m, st.diags
		}
		st.object(b)
	}
	if len(p.objects) > 0 && st.m.Project == "" && !st.projectWritten {
		st.missingProject(p.natsplan, p.objects[0])
	}
	st.diags = append(st.diags, expandGroups(ctx, st.m)...)
	if ctx.Err() != nil {
		return st.m, st.diags
	}
	st.diags = append(st.diags, expandBuckets(st.m)...)
	st.diags = append(st.diags, checkServices(st.m)...)
	return st.m, st.diags
}

func (st *loadState) errorf(subject hcl.Range, summary, format string, args ...any) {
	r := subject
	st.diags = append(st.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
		Detail: fmt.Sprintf(format, args...), Subject: &r})
}

// labels checks a top-level block's type and number of labels.
func (st *loadState) labels(b *hclsyntax.Block) bool {
	want, ok := blockLabels[b.Type]
	if !ok {
		st.errorf(b.TypeRange, "Unsupported block type",
			"Blocks of type %q are not expected here.%s The top level holds %s.", b.Type, didYouMean(b.Type, topLevel), strings.Join(topLevel, ", "))
		return false
	}
	usage := b.Type
	for _, l := range want {
		usage += fmt.Sprintf(" %q", l)
	}
	usage += " { ... }"
	switch {
	case len(b.Labels) < len(want):
		st.errorf(b.OpenBraceRange, "Missing name for "+b.Type, "A %s block needs %d label(s): %s.", b.Type, len(want), usage)
		return false
	case len(b.Labels) > len(want):
		st.errorf(b.LabelRanges[len(want)], "Extraneous label for "+b.Type, "A %s block takes %d label(s): %s.", b.Type, len(want), usage)
		return false
	}
	return true
}

// unique records the first declaration of address and reports later ones.
func (st *loadState) unique(address, what string, r hcl.Range) bool {
	if first, dup := st.declared[address]; dup {
		st.errorf(r, "Duplicate "+what, "%s is already declared at %s; names must be unique, so rename or remove one.", address, rangeString(first))
		return false
	}
	st.declared[address] = r
	return true
}

func (st *loadState) missingProject(natsplan []*hclsyntax.Block, first *hclsyntax.Block) {
	const why = "natsplan marks every object it creates with the project name and only ever deletes objects carrying that mark"
	if len(natsplan) > 0 {
		st.errorf(natsplan[0].DefRange(), "Missing project name", "Set project = \"<name>\" in this natsplan block: %s.", why)
		return
	}
	st.errorf(first.DefRange(), "Missing natsplan block",
		"Add natsplan { project = \"<name>\" } to one of the files: %s.", why)
}

// sortByRange sorts xs by file name and then position.
func sortByRange[T any](xs []T, rng func(T) hcl.Range) {
	sort.SliceStable(xs, func(i, j int) bool {
		a, b := rng(xs[i]), rng(xs[j])
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
}
