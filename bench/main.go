// Command bench measures natsplan against the raw JetStream API on one embedded
// server: applying N streams × 2 consumers (create) and planning them again (no
// changes), each next to its floor — the same work done with raw API requests at the
// best parallelism. Results go to stdout as a markdown table (see BENCHMARKS.md).
//
//	go run ./bench -n 1000
//	go run ./bench -n 10000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/apply"
	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// parallelism is natsplan's read and apply parallelism; 0 keeps the defaults.
var parallelism int

func main() {
	n := flag.Int("n", 1000, "number of streams (each with 2 consumers)")
	rounds := flag.Int("rounds", 3, "rounds of each measurement; the best is reported")
	flag.IntVar(&parallelism, "parallelism", 0, "natsplan's read and apply parallelism, as --parallelism (0: the defaults)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the natsplan runs (not the raw floors) to `FILE`")
	store := flag.String("store", "", "make the server's store (and the HCL files) under `DIR` (default: the system's temp dir); "+
		"a tmpfs such as /dev/shm takes a shared disk's noise out of both sides")
	parList := flag.String("pars", "1,4,16,64", "the raw floors' parallelisms, comma separated; each round runs each")
	procs := flag.Bool("process", true, "also measure natsplan plan and apply and the raw floors as whole processes")
	natsplanBin := flag.String("natsplan", "", "the natsplan binary of the whole-process runs (default: built from this module)")
	raw := flag.String("raw", "", "run as the whole-process raw floor against -url and exit: `MODE` read or create")
	url := flag.String("url", "", "with -raw: the server's URL")
	rawPar := flag.Int("raw-parallelism", 64, "with -raw: requests in flight")
	measureCmd := flag.Bool("measure", false, "run the command after -- and print its wall time and peak RSS as JSON (used by the whole-process runs)")
	flag.Parse()
	if *measureCmd {
		if err := measure(flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "bench -measure:", err)
			os.Exit(1)
		}
		return
	}
	if *raw != "" {
		if err := rawProcess(*raw, *url, *n, *rawPar); err != nil {
			fmt.Fprintln(os.Stderr, "bench -raw:", err)
			os.Exit(1)
		}
		return
	}
	var pars []int
	for _, f := range strings.Split(*parList, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			fmt.Fprintf(os.Stderr, "bench: -pars %q: want positive numbers, comma separated\n", *parList)
			os.Exit(2)
		}
		pars = append(pars, p)
	}
	opts := runOptions{n: *n, rounds: *rounds, cpuprofile: *cpuprofile, store: *store, pars: pars, process: *procs, natsplan: *natsplanBin}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runOptions are the harness's flags.
type runOptions struct {
	n, rounds         int
	cpuprofile, store string
	pars              []int
	process           bool
	natsplan          string
}

func run(o runOptions) error {
	n, rounds, cpuprofile, pars := o.n, o.rounds, o.cpuprofile, o.pars
	ctx := context.Background()
	dir, err := os.MkdirTemp(o.store, "natsplan-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := embedded.Start(embedded.Options{StoreDir: filepath.Join(dir, "store"), DefaultMaxConsumers: -1})
	if err != nil {
		return err
	}
	defer s.Stop()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js := jsapi.New(nc, "", 30*time.Second)
	cfgDir := filepath.Join(dir, "hcl")
	if err := writeConfig(cfgDir, n); err != nil {
		return err
	}
	startLoad := loadAverage()
	prof := profiler{base: cpuprofile}
	var ps *processes
	if o.process {
		bin := o.natsplan
		if bin == "" {
			if bin, err = buildNatsplan(dir); err != nil {
				return err
			}
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		ps = &processes{natsplan: bin, self: self, url: s.ClientURL(), dir: cfgDir, n: n, par: 64, js: js}
	}
	var pPlan, pRead, pApply, pCreate proc

	var rawCreate, rawRead time.Duration
	var npApply, npPlan, npStatus, npWatch phases
	var rawCreatePar, rawReadPar int
	for r := 0; r < rounds; r++ {
		// This round's raw floors, by parallelism, for the log.
		created, read := map[int]time.Duration{}, map[int]time.Duration{}
		// Raw create floor: the same streams and consumers, best parallelism.
		for _, par := range pars {
			d, err := timed(func() error { return rawCreateAll(ctx, js, n, par) })
			if err != nil {
				return fmt.Errorf("raw create: %w", err)
			}
			created[par] = d
			if rawCreate == 0 || d < rawCreate {
				rawCreate, rawCreatePar = d, par
			}
			if err := deleteAll(ctx, js, n, 64); err != nil {
				return err
			}
		}
		// natsplan apply (load + read + plan + apply), default parallelism.
		var applied, planned phases
		if err := prof.around("apply", func() error { return natsplanApply(ctx, js, cfgDir, &applied) }); err != nil {
			return fmt.Errorf("natsplan apply: %w", err)
		}
		npApply = npApply.best(applied)
		// Raw read floor: list every stream and every consumer, best parallelism.
		for _, par := range pars {
			d, err := timed(func() error { return rawReadAll(ctx, js, n, par) })
			if err != nil {
				return fmt.Errorf("raw read: %w", err)
			}
			read[par] = d
			if rawRead == 0 || d < rawRead {
				rawRead, rawReadPar = d, par
			}
		}
		// natsplan plan with no changes (load + read + plan).
		if err := prof.around("plan", func() error { return natsplanPlan(ctx, js, cfgDir, &planned) }); err != nil {
			return fmt.Errorf("natsplan plan: %w", err)
		}
		npPlan = npPlan.best(planned)
		// natsplan status on the same topology: a first sample, then a --watch sample.
		var first, again phases
		if err := prof.around("status", func() error { return natsplanStatus(ctx, js, cfgDir, &first, &again) }); err != nil {
			return fmt.Errorf("natsplan status: %w", err)
		}
		npStatus, npWatch = npStatus.best(first), npWatch.best(again)
		fmt.Fprintf(os.Stderr, "round %d: natsplan status %s; a --watch sample %s\n", r+1, first, again)
		fmt.Fprintf(os.Stderr, "round %d: raw create %s; natsplan apply %s\n", r+1, byPar(created, pars), applied)
		fmt.Fprintf(os.Stderr, "round %d: raw read %s; natsplan plan %s\n", r+1, byPar(read, pars), planned)
		if ps != nil {
			pl, rd, ap, cr, err := ps.round(ctx)
			if err != nil {
				return fmt.Errorf("whole processes: %w", err)
			}
			pPlan, pRead, pApply, pCreate = pPlan.best(pl), pRead.best(rd), pApply.best(ap), pCreate.best(cr)
			fmt.Fprintf(os.Stderr, "round %d: processes: natsplan plan %s, raw read p%d %s; natsplan apply %s, raw create p%d %s\n",
				r+1, pl, ps.par, rd, ap, ps.par, cr)
		}
		if r < rounds-1 {
			if err := deleteAll(ctx, js, n, 64); err != nil {
				return err
			}
		}
	}
	if err := prof.err; err != nil {
		return err
	}
	fmt.Printf("N = %d streams × 2 consumers, best of %d rounds, %d CPUs, %s; load average %s at the start, %s at the end\n\n",
		n, rounds, runtime.NumCPU(), runtime.Version(), startLoad, loadAverage())
	fmt.Println("| measurement | natsplan | raw floor | ratio | target |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| plan, no changes | %s | %s (parallelism %d) | %.2f× | ≤ 1.5× |\n", round(npPlan.total), round(rawRead), rawReadPar, ratio(npPlan.total, rawRead))
	fmt.Printf("| apply, create | %s | %s (parallelism %d) | %.2f× | ≤ 1.3× |\n", round(npApply.total), round(rawCreate), rawCreatePar, ratio(npApply.total, rawCreate))
	if ps != nil {
		fmt.Println()
		fmt.Println("| whole processes | natsplan | raw floor | ratio | target |")
		fmt.Println("|---|---|---|---|---|")
		fmt.Printf("| plan, no changes | %s | %s (parallelism %d) | %.2f× | ≤ 1.5× |\n", pPlan, pRead, ps.par, ratio(pPlan.took, pRead.took))
		fmt.Printf("| apply, create (preflight included) | %s | %s (parallelism %d) | %.2f× | ≤ 1.3× |\n", pApply, pCreate, ps.par, ratio(pApply.took, pCreate.took))
	}
	fmt.Println()
	fmt.Println("| status against plan | status | plan | ratio |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| first sample (load ∥ read, evaluate) | %s | %s | %.2f× |\n", round(npStatus.total), round(npPlan.total), ratio(npStatus.total, npPlan.total))
	fmt.Printf("| a --watch sample (read the declared streams, evaluate) | %s | %s | %.2f× |\n", round(npWatch.total), round(npPlan.total), ratio(npWatch.total, npPlan.total))
	fmt.Println()
	fmt.Println("| natsplan phases (best run) | load | read | compute | apply |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| plan | %s | %s | %s | |\n", round(npPlan.load), round(npPlan.read), round(npPlan.compute))
	fmt.Printf("| apply | %s | %s | %s | %s |\n", round(npApply.load), round(npApply.read), round(npApply.compute), round(npApply.apply))
	fmt.Printf("| status (compute: evaluate) | %s | %s | %s | |\n", round(npStatus.load), round(npStatus.read), round(npStatus.compute))
	return nil
}

// phases is where one natsplan run spent its time.
type phases struct {
	load, read, compute, apply, total time.Duration
}

// best keeps the faster of two runs (a zero p is no run yet).
func (p phases) best(q phases) phases {
	if p.total == 0 || q.total < p.total {
		return q
	}
	return p
}

func (p phases) String() string {
	s := fmt.Sprintf("%s (load %s, read %s, compute %s", round(p.total), round(p.load), round(p.read), round(p.compute))
	if p.apply > 0 {
		s += fmt.Sprintf(", apply %s", round(p.apply))
	}
	return s + ")"
}

// profiler writes a CPU profile of each natsplan run to base.<name>.<run>, so the
// natsplan side can be read without the raw floors mixed in. The embedded server runs
// in this process, so the server's share of the work is in the profile too.
type profiler struct {
	base string
	runs map[string]int
	err  error
}

func (p *profiler) around(name string, f func() error) error {
	if p.base == "" {
		return f()
	}
	if p.runs == nil {
		p.runs = map[string]int{}
	}
	p.runs[name]++
	out, err := os.Create(fmt.Sprintf("%s.%s.%d", p.base, name, p.runs[name]))
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return err
	}
	ferr := f()
	pprof.StopCPUProfile()
	if err := out.Close(); err != nil && p.err == nil {
		p.err = err
	}
	return ferr
}

// byPar renders one round's times by parallelism.
func byPar(d map[int]time.Duration, pars []int) string {
	parts := make([]string, len(pars))
	for i, p := range pars {
		parts[i] = fmt.Sprintf("p%d %s", p, round(d[p]))
	}
	return strings.Join(parts, ", ")
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func streamName(i int) string { return fmt.Sprintf("S%05d", i) }

// writeConfig writes N streams × 2 consumers, in files of 100 streams each.
func writeConfig(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file := 0; file*100 < n; file++ {
		var b strings.Builder
		if file == 0 {
			b.WriteString("natsplan {\n  project = \"bench\"\n}\n\n")
		}
		for i := file * 100; i < n && i < (file+1)*100; i++ {
			fmt.Fprintf(&b, "stream %q {\n  subjects = [\"s%d.>\"]\n  max_age  = \"1h\"\n}\n\n", streamName(i), i)
			for _, c := range []string{"a", "b"} {
				fmt.Fprintf(&b, "consumer %q %q {\n  ack_policy      = \"explicit\"\n  max_ack_pending = 100\n}\n\n", streamName(i), c)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.hcl", file)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// computePlan loads, reads and plans, timing each phase into ph.
func computePlan(ctx context.Context, js *jsapi.Client, dir string, ph *phases) (*plan.Plan, error) {
	start := time.Now()
	desired, live, err := loadAndRead(ctx, js, dir, ph)
	if err != nil {
		return nil, err
	}
	t2 := time.Now()
	p, err := plan.Compute(desired, live, plan.Options{Version: "bench"})
	t3 := time.Now()
	ph.compute, ph.total = t3.Sub(t2), t3.Sub(start)
	return p, err
}

// loadAndRead does as the commands do: load the files and read the server at the same
// time. It sets ph.load and ph.read, each timed from the start of both.
func loadAndRead(ctx context.Context, js *jsapi.Client, dir string, ph *phases) (desired, live *model.Model, err error) {
	start := time.Now()
	type read struct {
		live *model.Model
		err  error
		took time.Duration
	}
	done := make(chan read, 1)
	go func() {
		live, err := observe.Read(ctx, js, observe.Options{Parallelism: parallelism})
		done <- read{live, err, time.Since(start)}
	}()
	desired, diags := schema.Load([]string{dir}, schema.Vars{})
	ph.load = time.Since(start)
	r := <-done
	ph.read = r.took
	if diags.HasErrors() {
		return nil, nil, diags
	}
	return desired, r.live, r.err
}

func natsplanPlan(ctx context.Context, js *jsapi.Client, dir string, ph *phases) error {
	p, err := computePlan(ctx, js, dir, ph)
	if err != nil {
		return err
	}
	if p.HasChanges() {
		return fmt.Errorf("plan after apply has %d changes (first: %s %s)", len(p.Changes), p.Changes[0].Action, p.Changes[0].Address)
	}
	return nil
}

func natsplanApply(ctx context.Context, js *jsapi.Client, dir string, ph *phases) error {
	p, err := computePlan(ctx, js, dir, ph)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := apply.Run(ctx, js, p, apply.Options{Parallelism: parallelism})
	ph.apply = time.Since(start)
	ph.total += ph.apply
	if err != nil {
		return err
	}
	if !res.OK() {
		return fmt.Errorf("apply failed: %+v", res.Counts())
	}
	return nil
}

// forEach runs f(i) for i in [0,n) with par workers and returns the first error.
func forEach(n, par int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// rawCreateAll creates what the configuration declares with plain API requests: each
// stream, then its two consumers, the fastest a hand-written script could.
func rawCreateAll(ctx context.Context, js *jsapi.Client, n, par int) error {
	return forEach(n, par, func(i int) error {
		name := streamName(i)
		cfg := fmt.Sprintf(`{"name":%q,"subjects":["s%d.>"],"max_age":3600000000000,"retention":"limits","storage":"file","num_replicas":1,"discard":"old","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_msgs_per_subject":-1}`, name, i)
		if _, err := js.CreateStream(ctx, name, []byte(cfg)); err != nil {
			return err
		}
		for _, c := range []string{"a", "b"} {
			cc := fmt.Sprintf(`{"durable_name":%q,"ack_policy":"explicit","deliver_policy":"all","replay_policy":"instant","max_ack_pending":100}`, c)
			if _, err := js.WriteConsumer(ctx, name, c, []byte(cc), jsapi.ConsumerCreate); err != nil {
				return err
			}
		}
		return nil
	})
}

func deleteAll(ctx context.Context, js *jsapi.Client, n, par int) error {
	return forEach(n, par, func(i int) error {
		err := js.DeleteStream(ctx, streamName(i))
		if err != nil && !jsapi.IsNotFound(err) {
			return err
		}
		return nil
	})
}

// rawReadAll is the read floor: page through STREAM.LIST, then CONSUMER.LIST of every
// stream with par requests in flight, decoding the replies into the server's types as
// natsplan does. It fails unless it saw all n streams and 2n consumers, so a fast
// floor is never an incomplete one.
func rawReadAll(ctx context.Context, js *jsapi.Client, n, par int) error {
	var names []string
	for offset := 0; ; {
		page, err := js.ListStreams(ctx, offset)
		if err != nil {
			return err
		}
		for _, si := range page.Streams {
			names = append(names, si.Config.Name)
		}
		offset += len(page.Streams) + len(page.Missing)
		if len(page.Streams)+len(page.Missing) == 0 || offset >= page.Total {
			break
		}
	}
	sort.Strings(names)
	var consumers atomic.Int64
	err := forEach(len(names), par, func(i int) error {
		for offset := 0; ; {
			page, err := js.ListConsumers(ctx, names[i], offset)
			if err != nil {
				return err
			}
			consumers.Add(int64(len(page.Consumers)))
			offset += len(page.Consumers) + len(page.Missing)
			if len(page.Consumers)+len(page.Missing) == 0 || offset >= page.Total {
				return nil
			}
		}
	})
	if err == nil && (len(names) != n || consumers.Load() != int64(2*n)) {
		err = fmt.Errorf("read %d streams and %d consumers, want %d and %d", len(names), consumers.Load(), n, 2*n)
	}
	return err
}

// loadAverage is the 1-, 5- and 15-minute load average, where the system tells it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
