//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestStalledApplyLosesTheLock stalls a real natsplan apply with SIGSTOP in the middle
// of its changes, lets a second apply take the lock over once the first one's lease
// expires and apply its own configuration, then resumes the first. The resumed apply
// sends no write, exits 1 saying it lost the lock, and the second apply's
// configuration stays in place.
func TestStalledApplyLosesTheLock(t *testing.T) {
	bin, err := exec.LookPath("natsplan") // the test binary, put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	s := testsrv.Start(t)
	config := func(maxAge string) string {
		var b strings.Builder
		b.WriteString("natsplan {\n  project = \"shop\"\n  lock {\n    ttl = \"3s\"\n  }\n}\n")
		for i := range 8 {
			fmt.Fprintf(&b, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n  max_age  = %q\n}\n", i, i, maxAge)
		}
		return b.String()
	}
	first := writeConfig(t, map[string]string{"shop.hcl": config("1h")})
	second := writeConfig(t, map[string]string{"shop.hcl": config("2h")})
	rec := record(t, testsrv.Connect(t, s), "$JS.API.>")

	// Each request of the first apply takes a 400ms round trip (well below the 1s its
	// lease refresh may take with a 3s ttl): it is stopped while waiting for the
	// reply to its second write, which the server has already seen.
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "apply", "--auto-approve", "--parallelism", "1", first)
	cmd.Env = []string{"NATS_URL=" + testsrv.LatencyProxy(t, s.ClientURL(), 200*time.Millisecond),
		"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "NO_COLOR=1"}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
	})

	// Stop it once it has sent its second write.
	var stalled string
	for deadline := time.Now().Add(30 * time.Second); stalled == ""; time.Sleep(5 * time.Millisecond) {
		writes := map[string]int{}
		for _, m := range rec.events(t) {
			if apiWrite(m) {
				if writes[sender(m)]++; writes[sender(m)] == 2 {
					stalled = sender(m)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first apply sent fewer than 2 writes\n%s\n%s", out.String(), errOut.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	// The second apply waits for the stalled lease to expire, takes it over, and
	// applies its configuration.
	if code, out, errOut := cli(t, s.ClientURL(), "apply", "--auto-approve", "--lock-timeout", "30s", second); code != 0 {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errOut)
	}
	resumedAt := len(rec.events(t))
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the resumed apply did not exit")
	}
	exited <- nil // for the cleanup

	if code := cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(errOut.String(), "lost the apply lock natsplan_lock/shop") {
		t.Errorf("resumed apply: exit %d, want 1 saying it lost the lock\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, m := range rec.events(t)[resumedAt:] {
		if apiWrite(m) && sender(m) == stalled {
			t.Errorf("the resumed apply sent %s after losing the lock", m.Subject)
		}
	}
	js := jetStream(t, s)
	for i := range 8 {
		st, err := js.Stream(context.Background(), fmt.Sprintf("S%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.CachedInfo().Config.MaxAge; got != 2*time.Hour {
			t.Errorf("S%d max_age = %s, want the second apply's 2h", i, got)
		}
	}
}
