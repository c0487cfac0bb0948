package fakehost

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// all is a plugin that requests every capability and declares one probe
// and one guard property.
var all = abi.PluginInfo{Type: "t", Guards: []string{"onlyif"}, Capabilities: abi.Capabilities{
	FSRead: []string{"/**"}, FSWrite: []string{"/**"}, Exec: []string{"/**"}, Users: true,
	ProbeExec: []string{"/usr/bin/true"},
}}

func wantDenied(t *testing.T, err error, msg string) {
	t.Helper()
	var ce *abi.CallError
	if !errors.As(err, &ce) || ce.Code != abi.CodeDenied || !strings.Contains(ce.Message, msg) {
		t.Fatalf("got %v, want a denied error with %q", err, msg)
	}
}

// TestReadOnlyRefusesMutations: the property the plugin tests rely on, from
// the host's own rule.
func TestReadOnlyRefusesMutations(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	h := &Host{Info: all, ReadOnly: true, Properties: map[string]any{"onlyif": "/usr/bin/test -d /"}}
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
		{"undeclared probe", func() error {
			_, err := h.Exec(abi.ExecRequest{Argv: []string{"/usr/bin/touch", p}, Probe: true})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) { wantDenied(t, c.do(), "") })
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("read-only host created %s", p)
	}
	if out, err := h.Exec(abi.ExecRequest{Argv: []string{"/usr/bin/true"}, Probe: true}); err != nil || out.ExitCode != 0 {
		t.Fatalf("declared probe refused: %+v, %v", out, err)
	}
	if out, err := h.Exec(abi.ExecRequest{Argv: []string{"/usr/bin/test", "-d", "/"}, Probe: true}); err != nil || out.ExitCode != 0 {
		t.Fatalf("guard refused: %+v, %v", out, err)
	}
	// A third-party plugin's own word is not enough.
	tp := &Host{Info: all, ReadOnly: true, ThirdParty: true, Grants: trust.Chain{trust.All()}}
	_, err := tp.Exec(abi.ExecRequest{Argv: []string{"/usr/bin/true"}, Probe: true})
	wantDenied(t, err, "needs a matching probe_exec entry in every grant")
}

// TestCapabilitiesAndGrants: the plugin's Info and the grant chain apply.
func TestCapabilitiesAndGrants(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	wantDenied(t, (&Host{}).WriteFile(abi.FSWriteRequest{Path: p, Mode: 0o644}), "the plugin's capabilities do not request it")
	h := &Host{Info: all, Grants: trust.Chain{{FSWrite: []string{"/nowhere/**"}}}}
	wantDenied(t, h.WriteFile(abi.FSWriteRequest{Path: p, Mode: 0o644}), "fs_write not granted")
	_, err := (&Host{Info: all}).Exec(abi.ExecRequest{Argv: []string{"/usr/bin/true"}, Env: []string{"LD_PRELOAD=/x.so"}})
	wantDenied(t, err, "LD_PRELOAD can make the program load or run other code")
}

func TestStatAndWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	h := &Host{Info: all}
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
	if h.Count(abi.CallFSStat) != 3 || len(h.Mutations()) != 1 {
		t.Fatalf("calls %v", h.Calls())
	}
}

func TestFailIgnoreLookupLog(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	boom := &abi.CallError{Code: abi.CodeIO, Message: "boom"}
	h := &Host{Info: all, Fail: map[string]*abi.CallError{abi.CallFSMkdir: boom}, Ignore: map[string]bool{abi.CallFSWrite: true},
		Data: map[string]any{"a": map[string]any{"b": "c"}}}
	if err := h.Mkdir(abi.FSMkdirRequest{Path: p, Mode: 0o755}); !errors.Is(err, boom) {
		t.Fatalf("Fail: %v", err)
	}
	if err := h.WriteFile(abi.FSWriteRequest{Path: p, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatal("an ignored write happened")
	}
	if v, ok, err := h.Lookup("a.b"); v != "c" || !ok || err != nil {
		t.Fatalf("Lookup: %v %v %v", v, ok, err)
	}
	h.Log("info", "hi")
	if l := h.Logs(); len(l) != 1 || l[0].Message != "hi" {
		t.Fatalf("Logs %v", l)
	}
}

func TestExecKillsProcessGroupOnTimeout(t *testing.T) {
	h := &Host{Info: all}
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

// TestExecEnvironmentIsExact: exactly the request's environment; a bare
// name without PATH is looked up in hostcall.DefaultPath, as in ccm.
func TestExecEnvironmentIsExact(t *testing.T) {
	out, err := (&Host{Info: all}).Exec(abi.ExecRequest{Argv: []string{"env"}, Env: []string{"PATH=/usr/bin:/bin", "A=1"}})
	if err != nil || out.Stdout != "PATH=/usr/bin:/bin\nA=1\n" {
		t.Fatalf("%q, %v", out.Stdout, err)
	}
	if out, err := (&Host{Info: all}).Exec(abi.ExecRequest{Argv: []string{"env"}}); err != nil || out.Stdout != "" {
		t.Fatalf("bare name without PATH: %+v %v", out, err)
	}
}
