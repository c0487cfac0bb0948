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

// Binary builds ./cmd/ccm once (into a directory removed by Cleanup) and
// returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ccmtest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ccm")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/ccm")
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
// ("K=V"), and returns its output and exit status.
func Run(tb testing.TB, dir string, env []string, args ...string) Result {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"CCM_CACHE_DIR=" + cacheDir,
		"NO_COLOR=1",
	}, env...)
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

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
