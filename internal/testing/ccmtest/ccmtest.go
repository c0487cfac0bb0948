// Package ccmtest builds the ccm binary once per test binary and runs it the
// way a user does, for end-to-end tests in any package. It must not be
// imported by non-test code.
package ccmtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	cacheDir  string
)

// BuildTags are the tags of the test binary: ccm_testhooks compiles in the
// host's test-only exec redirect (host/hostcall/testhooks_on.go), which tests use
// to run testdata/fakes/systemctl in place of /usr/bin/systemctl.
const BuildTags = "ccm_testhooks"

// Binary builds ./cmd/ccm with BuildTags once (into a directory removed by
// Cleanup) and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ccmtest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ccm")
		cmd := exec.Command("go", "build", "-tags", BuildTags, "-o", binPath, "./cmd/ccm")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/ccm: %v\n%s", err, out)
		}
		// A compile cache shared by every test process of this run, kept
		// across runs so repeated `go test` stays fast.
		cacheDir = filepath.Join(os.TempDir(), "ccmtest-cache")
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// Result is one ccm invocation's outcome.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs ccm with args in dir, with a clean environment plus env
// ("K=V", which wins over the defaults), and returns its output and exit
// status.
func Run(tb testing.TB, dir string, env []string, args ...string) Result {
	tb.Helper()
	cmd := Command(tb, dir, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		tb.Fatalf("running ccm %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// Command is the command Run runs, for a test that starts ccm itself (to
// signal it midway, say).
func Command(tb testing.TB, dir string, env []string, args ...string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"CCM_CACHE_DIR=" + cacheDir,
		"CCM_PLUGIN_PATH=", // no operator plugins unless a test sets its own
		// Compile before the run, as ccm did before cold starts: a
		// background compile would outlive the test and write into a cache
		// its cleanup removes (cmd/ccm/coldstart_e2e_test.go tests it).
		"CCM_BACKGROUND_COMPILE=0",
		"NO_COLOR=1",
	}, env...)
	return cmd
}

// Fake is the absolute path of testdata/fakes/NAME.
func Fake(name string) string {
	return filepath.Join(repoRoot(), "testdata", "fakes", name)
}

// FakeSystemctl prepares testdata/fakes/systemctl for one test: a state
// directory with the given units (name to "ACTIVE ENABLED", e.g.
// "inactive disabled") and the environment that makes the binary run the
// fake in place of /usr/bin/systemctl. Calls are logged in
// state/calls.log, one argv per line (see Calls).
func FakeSystemctl(tb testing.TB, units map[string]string) (state string, env []string) {
	tb.Helper()
	state = tb.TempDir()
	for unit, st := range units {
		active, enabled, ok := strings.Cut(st, " ")
		if !ok {
			tb.Fatalf("FakeSystemctl: unit %s state %q is not \"ACTIVE ENABLED\"", unit, st)
		}
		writeState(tb, filepath.Join(state, unit+".active"), active)
		writeState(tb, filepath.Join(state, unit+".enabled"), enabled)
	}
	return state, []string{
		"CCM_TEST_EXEC_REDIRECT=/usr/bin/systemctl=" + Fake("systemctl") + ",/bin/systemctl=" + Fake("systemctl"),
		"FAKE_SYSTEMCTL_STATE=" + state,
	}
}

// Calls is the fake systemctl's call log: one "verb args..." per call.
func Calls(tb testing.TB, state string) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(state, "calls.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func writeState(tb testing.TB, path, v string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
