package main

import (
	"io"
	"os"
	"sync"
)

// IOStreams is where a command reads and writes; tests replace it. The plan or report
// goes to Out, progress and diagnostics to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdinTTY and StdoutTTY report whether those are terminals: prompts need the
	// first, colour and redrawn progress the second.
	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
}

func newSystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY: isTerminal(os.Stdin), StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr),
	}
}

// lockedWriter serialises writes: progress and the connection's asynchronous errors
// both write to stderr, from different goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
