package host

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// lockHost is a Host whose run locks live in dir; it loads no plugin.
func lockHost(t *testing.T, dir string) *Host {
	t.Helper()
	h, err := New(WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	h.SetLockDir(dir)
	return h
}

// logLines collects what a waiting call tells its caller.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+": "+msg)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestRunLockTwoHosts: two Hosts (separate open files of one lock file, as
// two ccm processes have) exclude each other; the second waits, says so,
// and gets the lock once the first releases it.
func TestRunLockTwoHosts(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	h1, h2 := lockHost(t, dir), lockHost(t, dir)
	info := abi.PluginInfo{Type: "package", Lock: "package"}
	apply := trust.Caller{Mode: trust.ModeApply}

	release1, err := h1.lockIfNeeded(context.Background(), info, apply)
	if err != nil {
		t.Fatal(err)
	}
	var logs logLines
	waiter := apply
	waiter.Log = logs.log
	got := make(chan time.Time, 1)
	go func() {
		release2, err := h2.lockIfNeeded(context.Background(), info, waiter)
		if err != nil {
			t.Error(err)
			got <- time.Time{}
			return
		}
		got <- time.Now()
		release2()
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("the second Host took the lock while the first held it")
	default:
	}
	if want := "warn: waiting for the package lock held by another ccm run (" + dir + "/package.lock)"; !strings.HasPrefix(logs.String(), want) {
		t.Fatalf("waiting message %q, want it to start with %q", logs.String(), want)
	}
	released := time.Now()
	release1()
	select {
	case at := <-got:
		if at.IsZero() {
			return
		}
		if d := at.Sub(released); d > time.Second {
			t.Errorf("the second Host took the lock %s after its release", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second Host did not get the lock after the first released it")
	}
	if n := strings.Count(logs.String(), "\n"); n != 0 {
		t.Errorf("the waiting message was repeated: %q", logs.String())
	}
}

// TestRunLockModes: only apply mode locks; noop, health checks and status
// go ahead while another holds the lock, and a plugin without Lock never
// locks. A wait longer than the call's limit fails with a message naming
// the lock file.
func TestRunLockModes(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	holder, h := lockHost(t, dir), lockHost(t, dir)
	info := abi.PluginInfo{Type: "service", Lock: "service"}
	release, err := holder.lockIfNeeded(context.Background(), info, trust.Caller{Mode: trust.ModeApply})
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	for _, mode := range []trust.Mode{trust.ModeNoop, trust.ModeHealthCheck, trust.ModeStatus} {
		rel, err := h.lockIfNeeded(context.Background(), info, trust.Caller{Mode: mode})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		rel()
	}
	rel, err := h.lockIfNeeded(context.Background(), abi.PluginInfo{Type: "file"}, trust.Caller{Mode: trust.ModeApply})
	if err != nil {
		t.Fatal(err)
	}
	rel()

	start := time.Now()
	_, err = h.acquireLock(context.Background(), "service", "service", 300*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms waiting for the service lock "+dir+"/service.lock held by another ccm run") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %s, want about 300ms", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.acquireLock(ctx, "service", "service", time.Minute, nil); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("cancelled wait: err = %v", err)
	}
}

// TestRunLockBadName: a lock name is a file name in the lock directory; a
// plugin cannot reach outside it.
func TestRunLockBadName(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	h := lockHost(t, dir)
	for _, name := range []string{"../x", "a/b", ".hidden", "UPPER", strings.Repeat("a", 65), "a b"} {
		_, err := h.lockIfNeeded(context.Background(), abi.PluginInfo{Type: "evil", Lock: name}, trust.Caller{Mode: trust.ModeApply})
		if err == nil || !strings.Contains(err.Error(), `plugin for type "evil" declares lock`) {
			t.Errorf("lock %q: err = %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad names created %v", entries)
	}
}

// TestRunLockOtherProcess: the lock excludes a separate process too (this
// test binary re-run as a holder).
func TestRunLockOtherProcess(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLockHolderProcess$")
	cmd.Env = append(os.Environ(), "CCM_LOCK_HOLDER_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		stdin.Close()
		t.Fatalf("holder said %q", line)
	}
	h := lockHost(t, dir)
	if _, err := h.acquireLock(context.Background(), "package", "package", 200*time.Millisecond, nil); err == nil {
		t.Fatal("took the lock another process holds")
	}
	stdin.Close() // the holder exits, releasing the lock
	rel, err := h.acquireLock(context.Background(), "package", "package", 10*time.Second, nil)
	if err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
	rel()
}

// TestRunLockHolderProcess is the holder of TestRunLockOtherProcess: it
// takes the package lock, says so, and keeps it until stdin closes.
func TestRunLockHolderProcess(t *testing.T) {
	dir := os.Getenv("CCM_LOCK_HOLDER_DIR")
	if dir == "" {
		t.Skip("helper process of TestRunLockOtherProcess")
	}
	h := lockHost(t, dir)
	rel, err := h.acquireLock(context.Background(), "package", "package", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}
