package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
)

// run is the whole program: it builds the commands, handles signals once, and maps
// the result to an exit code. main only calls it.
//
// The first Ctrl-C or SIGTERM ends the command's context: loading, reading the
// server, computing and waiting for confirmation stop at once. Only apply's writes
// in flight are let finish (apply gets a context that does not end, and stop, which
// starts nothing new); the second signal exits at once. An interrupted command that
// had not succeeded exits 130.
func run(args []string, io *IOStreams, getenv func(string) string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	finished := make(chan struct{})
	defer close(finished)
	var interrupted atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	f := newFactory(io, getenv, stop)
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		interrupted.Store(true)
		if f.writing.Load() {
			fmt.Fprintln(io.ErrOut, "\nInterrupted: finishing the requests in flight, starting nothing new (Ctrl-C again to exit now).")
		} else {
			fmt.Fprintln(io.ErrOut, "\nInterrupted.")
		}
		close(stop)
		cancel()
		select {
		case <-sigs:
			fmt.Fprintln(io.ErrOut, "Interrupted twice: exiting.")
			os.Exit(exitInterrupted)
		case <-finished:
		}
	}()

	defer f.Close()
	root := newCmdRoot(f)
	root.SetArgs(args)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	err := root.ExecuteContext(ctx)
	code, msg := exitCodeOf(err)
	if err != nil && interrupted.Load() {
		code = exitInterrupted
		if errors.Is(err, context.Canceled) {
			msg = nil // "Interrupted." said it all
		}
	}
	if msg != nil {
		fmt.Fprintf(io.ErrOut, "Error: %s\n", msg)
	}
	if err != nil && code == exitOK {
		code = exitError
	}
	return code
}

func newCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "natsplan",
		Short: "Declarative NATS JetStream topology: plan, prove, apply",
		Long: `natsplan reads HCL files that describe streams, consumers, KV buckets, object stores,
partitioned subject mappings and consumer groups; plans the difference against the live
server; proves the invariants that keep concurrent consumers correct; and applies exactly
the reviewed plan.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitErr{Code: exitError, Err: fmt.Errorf("%w\nRun '%s --help' for usage", err, c.CommandPath())}
	})
	f.Global.bind(root, f.getenv)
	root.RegisterFlagCompletionFunc("context", f.completeContexts)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return f.Global.check(c) }
	root.AddCommand(
		newCmdValidate(f),
		newCmdFmt(f),
		newCmdPlan(f),
		newCmdApply(f),
		newCmdDrift(f),
		newCmdImport(f),
		newCmdShow(f),
		newCmdPartition(f),
		newCmdStatus(f),
		newCmdPermissions(f),
		newCmdVersion(f),
	)
	return root
}

// usageErr is an invalid command line: never exit 0 on one.
func usageErr(format string, a ...any) error {
	return &exitErr{Code: exitError, Err: fmt.Errorf(format, a...)}
}
