package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestInterruptedConverge kills ccm (SIGKILL) in the middle of a batch of
// new files whose fsyncs and renames are put off (hostcall.Pending) and
// checks that every target is absent or complete, never partial or empty,
// and that the next run converges them all and leaves no temp file.
func TestInterruptedConverge(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	want := func(i int) string { return strings.Repeat(fmt.Sprintf("file %d\n", i), 64) }
	var m strings.Builder
	m.WriteString("ccm:\n  resources:\n    - file:\n")
	for i := range n {
		fmt.Fprintf(&m, "        - %s/f%04d: {ensure: present, content: %q, mode: \"0644\", owner: \"@USER@\", group: \"@GROUP@\"}\n", out, i, want(i))
	}
	writeManifest(t, dir, "m.yaml", m.String())

	check := func(when string, all bool) (present int) {
		t.Helper()
		for i := range n {
			b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("f%04d", i)))
			switch {
			case os.IsNotExist(err) && !all:
			case err != nil:
				t.Fatalf("%s: f%04d: %v", when, i, err)
			case !bytes.Equal(b, []byte(want(i))):
				t.Fatalf("%s: f%04d is partial or wrong: %d of %d bytes", when, i, len(b), len(want(i)))
			default:
				present++
			}
		}
		return present
	}

	cmd := ccmtest.Command(t, dir, nil, "apply", "m.yaml")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once some files are in place and temp files (pending writes)
	// are there too: mid-batch.
	sawTemp := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !sawTemp; time.Sleep(200 * time.Microsecond) {
		ents, _ := os.ReadDir(out)
		placed, temps := 0, 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".ccm-tmp") {
				temps++
			} else {
				placed++
			}
		}
		sawTemp = temps > 0 && placed > 0
		if placed == n {
			break // done before the poll saw a batch in flight
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	present := check("after SIGKILL", false)
	t.Logf("killed mid-batch: %v; %d of %d files in place", sawTemp, present, n)

	start := time.Now()
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	t.Logf("next run: %v", time.Since(start))
	if res.Code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	check("after the next run", true)
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("the next run left %s", e.Name())
		}
	}
}
