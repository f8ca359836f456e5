//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIsTerminal: only a terminal is one. /dev/null is a character device like a
// terminal, which is what CI hands a command as stdin, so it is the case that matters.
func TestIsTerminal(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	file, err := os.Create(filepath.Join(t.TempDir(), "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devNull.Close() })
	cases := []struct {
		name string
		f    *os.File
		want bool
	}{
		{"dev null", devNull, false},
		{"pipe", pr, false},
		{"regular file", file, false},
	}
	if pty := openPTY(t); pty != nil {
		cases = append(cases, struct {
			name string
			f    *os.File
			want bool
		}{"pseudo terminal", pty, true})
	}
	for _, c := range cases {
		if got := isTerminal(c.f); got != c.want {
			t.Errorf("isTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// openPTY opens the terminal end of a new pseudo terminal, or returns nil (and logs
// why) where the system has none to give.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Logf("no pseudo terminal: %v", err)
		return nil
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Logf("no pseudo terminal: unlock: %v", err)
		return nil
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Logf("no pseudo terminal: number: %v", err)
		return nil
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Logf("no pseudo terminal: %v", err)
		return nil
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}
