package main

import (
	"errors"
	"fmt"
)

// Exit codes (docs/commands).
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // plan --detailed-exitcode with changes; drift found
	exitFormat  = 3 // fmt --check: a file would change
	// exitInterrupted is the shell's code for a command ended by Ctrl-C (128 + SIGINT).
	exitInterrupted = 130
)

// exitError carries an exit code out of a command. A nil Err means the reason was
// already printed (diagnostics, a rendered plan) and nothing more is to be said.
type exitErr struct {
	Code int
	Err  error
}

func (e *exitErr) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitErr) Unwrap() error { return e.Err }

// silentExit exits with code after the command has said all there is to say.
func silentExit(code int) error { return &exitErr{Code: code} }

// exitCodeOf maps an error returned by a command to the process exit code.
func exitCodeOf(err error) (int, error) {
	if err == nil {
		return exitOK, nil
	}
	var e *exitErr
	if errors.As(err, &e) {
		return e.Code, e.Err
	}
	return exitError, err
}
