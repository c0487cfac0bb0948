package sdkexamples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// scratchPlugin is a plugin author's whole module: a resource type "note"
// that writes its text property to the file its name gives.
const scratchPlugin = `package main

import (
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

type note struct{}

func (note) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI: abi.Version, Type: "note", Version: "0.1.0",
		Providers: []string{"posix"}, Ensure: []string{"present"}, DefaultEnsure: "present",
		Capabilities: abi.Capabilities{FSRead: []string{"/**"}, FSWrite: []string{"/**"}},
	}
}

func (note) Validate(req abi.ValidateRequest) []string {
	if _, ok := req.Properties["text"].(string); !ok {
		return []string{"text: required, a string"}
	}
	return nil
}

func (note) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	return abi.StatusResponse{FinalEnsure: "present"}
}

func (note) Apply(h sdk.Host, req abi.Request) abi.Result {
	text := req.Properties["text"].(string)
	if b, err := h.ReadFile(abi.FSReadRequest{Path: req.Name}); err == nil && string(b) == text {
		return abi.Result{FinalEnsure: "present"}
	}
	if req.Noop {
		return abi.Result{Changed: true, NoopMessage: "Would have written " + req.Name}
	}
	if err := h.WriteFile(abi.FSWriteRequest{Path: req.Name, Content: []byte(text), Mode: 0o644}); err != nil {
		return abi.Result{Error: err.Error()}
	}
	return abi.Result{Changed: true, FinalEnsure: "present"}
}

func main() {}

func init() { sdk.Register(note{}) }
`

// TestScratchModuleRequiresOnlySDK is a plugin author's first hour: a new
// module that requires only github.com/ccm-dev/ccm/sdk (here through a
// replace to this tree, offline) resolves to that one module, builds a
// plugin for wasip1, and the plugin runs in the ccm binary from a manifest.
func TestScratchModuleRequiresOnlySDK(t *testing.T) {
	mod := t.TempDir()
	sdkDir := filepath.Join(repoRoot(), "sdk")
	gomod := "module example.com/note\n\ngo 1.24\n\nrequire github.com/ccm-dev/ccm/sdk v0.1.0\n\nreplace github.com/ccm-dev/ccm/sdk => " + sdkDir + "\n"
	for name, body := range map[string]string{"go.mod": gomod, "main.go": scratchPlugin} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Offline, outside any workspace, with go.sum written as needed: the
	// build must need no module but the SDK.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	goCmd := func(extra []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = mod, append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if got, want := strings.Fields(goCmd(nil, "list", "-m", "all")), []string{"example.com/note", "github.com/ccm-dev/ccm/sdk", "v0.1.0", "=>", sdkDir}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("go list -m all in a module requiring only the SDK: %q; want %q", got, want)
	}
	start := time.Now()
	goCmd([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", "note.wasm", ".")
	t.Logf("built note.wasm in %v", time.Since(start).Round(time.Millisecond))

	target := filepath.Join(t.TempDir(), "note.txt")
	manifest := filepath.Join(mod, "manifest.yaml")
	body := "ccm:\n  plugins:\n    - note.wasm\n  resources:\n    - note:\n        - " + target + ":\n            text: \"hello from a scratch module\\n\"\n"
	if err := os.WriteFile(manifest, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, wantCode := range []int{2, 0} { // converge, then stable
		res := ccmtest.Run(t, mod, nil, "apply", manifest, "--detailed-exitcodes")
		if res.Code != wantCode {
			t.Fatalf("apply %d: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", i+1, res.Code, wantCode, res.Stdout, res.Stderr)
		}
	}
	checkFile(t, target, ptr("hello from a scratch module\n"), 0o644)
}
