package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether f is a console: only a console has a console mode.
// NUL, pipes and files in CI are not.
func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
