package main

import (
	"io"
	"os"
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

// isTerminal reports whether f is a character device, which is what a terminal is
// to a CLI; pipes, files and /dev/null in CI are not.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}
