package fakehost

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestReadOnlyRefusesMutations: the property the plugin tests rely on.
func TestReadOnlyRefusesMutations(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	h := &Host{ReadOnly: true}
	calls := []struct {
		name string
		do   func() error
	}{
		{abi.CallFSWrite, func() error { return h.WriteFile(abi.FSWriteRequest{Path: p, Mode: 0o644}) }},
		{abi.CallFSMkdir, func() error { return h.Mkdir(abi.FSMkdirRequest{Path: p, Mode: 0o755}) }},
		{abi.CallFSRemove, func() error { return h.Remove(abi.FSRemoveRequest{Path: dir}) }},
		{abi.CallFSChown, func() error { return h.Chown(abi.FSChownRequest{Path: dir, Owner: "0"}) }},
		{abi.CallFSChmod, func() error { return h.Chmod(abi.FSChmodRequest{Path: dir, Mode: 0o700}) }},
		{abi.CallExec, func() error {
			_, err := h.Exec(abi.ExecRequest{Argv: []string{"/usr/bin/touch", p}})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			var ce *abi.CallError
			if err := c.do(); !errors.As(err, &ce) || ce.Code != abi.CodeDenied {
				t.Fatalf("got %v, want a denied error", err)
			}
		})
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("read-only host created %s", p)
	}
	if out, err := h.Exec(abi.ExecRequest{Argv: []string{"/bin/true"}, Probe: true}); err != nil || out.ExitCode != 0 {
		t.Fatalf("probe refused: %+v, %v", out, err)
	}
}

func TestStatAndWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	h := &Host{}
	if err := h.WriteFile(abi.FSWriteRequest{Path: p, Content: []byte("hello\n"), Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	st, err := h.Stat(abi.FSStatRequest{Path: p, Checksum: true})
	if err != nil || !st.Exists || st.Type != "file" || st.Mode != 0o640 || st.Size != 6 ||
		st.SHA256 != "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" {
		t.Fatalf("stat %+v, %v", st, err)
	}
	if st, err := h.Stat(abi.FSStatRequest{Path: filepath.Join(dir, "no", "such")}); err != nil || st.Exists {
		t.Fatalf("missing path: %+v, %v", st, err)
	}
	if _, err := h.Stat(abi.FSStatRequest{Path: dir + "/../x"}); err == nil {
		t.Fatal("unclean path accepted")
	}
}

func TestExecKillsProcessGroupOnTimeout(t *testing.T) {
	h := &Host{}
	start := time.Now()
	// The grandchild sleep holds stdout open: only a group kill ends it.
	out, err := h.Exec(abi.ExecRequest{Shell: true, Command: "sleep 5 & sleep 5", TimeoutMS: 200, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil || !out.TimedOut {
		t.Fatalf("%+v, %v", out, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("timeout took %v", took)
	}
}

func TestExecEnvironmentIsExact(t *testing.T) {
	out, err := (&Host{}).Exec(abi.ExecRequest{Argv: []string{"env"}, Env: []string{"PATH=/usr/bin:/bin", "A=1"}})
	if err != nil || out.Stdout != "PATH=/usr/bin:/bin\nA=1\n" {
		t.Fatalf("%q, %v", out.Stdout, err)
	}
	if _, err := (&Host{}).Exec(abi.ExecRequest{Argv: []string{"env"}}); err == nil || !strings.Contains(err.Error(), "not found in PATH") {
		t.Fatalf("bare name without PATH: %v", err)
	}
}
