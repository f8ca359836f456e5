//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package main

import "os"

// isTerminal reports false: on this system natsplan cannot tell a terminal from
// another character device such as /dev/null, so it never prompts and never colours;
// apply needs --auto-approve.
func isTerminal(*os.File) bool { return false }
