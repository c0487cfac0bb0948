package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// TestRemoteHook: the engine hands remote names (with the apply's pin and
// the naming scope's grants) to Options.Remote, runs the returned bundle
// in a child scope, keeps a bundle's relative names inside it, and fails
// the apply resource, not the run, when the hook refuses.
func TestRemoteHook(t *testing.T) {
	bundleDir := tree(t, map[string]string{
		"manifest.yaml":  "ccm:\n  resources:\n    - mark:\n        - from-bundle: {}\n    - apply:\n        - sub/child.yaml: {}\n        - ../outside.yaml: {}\n",
		"sub/child.yaml": "ccm:\n  resources:\n    - mark:\n        - from-sub: {}\n",
	})
	pin := strings.Repeat("ab", 32)
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n" +
			"    - apply:\n        - obj://B/ok.tgz: {sha256: \"" + pin + "\", grants: {net: [nats], users: true}}\n" +
			"    - apply:\n        - obj://B/refused.tgz: {}\n" +
			"    - mark:\n        - after: {}\n",
		"outside.yaml": "ccm:\n  resources:\n    - mark:\n        - escaped: {}\n",
	})
	type call struct {
		name, pin string
		grants    trust.Chain
	}
	var calls []call
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) {
		o.Remote = func(_ context.Context, name, pin string, g trust.Chain) (string, string, error) {
			calls = append(calls, call{name, pin, g})
			if name == "obj://B/refused.tgz" {
				return "", "", errFake("bundle obj://B/refused.tgz: unsigned")
			}
			return filepath.Join(bundleDir, "manifest.yaml"), bundleDir, nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"from-bundle", "from-sub", "after"}) {
		t.Fatalf("applied %v (events %v)", got, refs(res))
	}
	if len(calls) != 2 || calls[0].pin != pin || calls[1].pin != "" {
		t.Fatalf("calls %+v", calls)
	}
	if e := event(t, res, "apply#obj://B/refused.tgz"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "unsigned") {
		t.Fatalf("refused: %+v", e)
	}
	if e := event(t, res, "apply#../outside.yaml"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "may only apply files inside its bundle") {
		t.Fatalf("escape: %+v", e)
	}
	// Logs name the bundle by source.
	if e := event(t, res, "mark#from-sub"); e.Manifest != "obj://B/ok.tgz!/sub/child.yaml" {
		t.Fatalf("manifest shown as %q", e.Manifest)
	}
}

func TestRemoteRefusals(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":   "ccm:\n  resources:\n    - apply:\n        - https://example.com/b.tgz: {}\n",
		"pin.yaml": "ccm:\n  resources:\n    - apply:\n        - local.yaml: {sha256: \"" + strings.Repeat("0", 64) + "\"}\n",
		"bad.yaml": "ccm:\n  resources:\n    - apply:\n        - obj://B/k: {sha256: \"xyz\"}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := event(t, res, "apply#https://example.com/b.tgz"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "remote manifests are not enabled") {
		t.Fatalf("no hook: %+v", e)
	}
	res, _ = run(t, f, filepath.Join(dir, "pin.yaml"), nil)
	if e := event(t, res, "apply#local.yaml"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "sha256 pins a remote bundle") {
		t.Fatalf("pin on local: %+v", e)
	}
	if _, err := run(t, f, filepath.Join(dir, "bad.yaml"), nil); err == nil || !strings.Contains(err.Error(), "not 64 hexadecimal digits") {
		t.Fatalf("bad pin at load: %v", err)
	}
	if _, err := run(t, f, "obj://B/k", nil); err == nil || !strings.Contains(err.Error(), "remote manifests are not enabled") {
		t.Fatalf("remote root without hook: %v", err)
	}
	if _, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.RootPin = strings.Repeat("0", 64) }); err == nil || !strings.Contains(err.Error(), "a sha256 pin applies to a remote bundle") {
		t.Fatalf("root pin on local: %v", err)
	}
}

type errFake string

func (e errFake) Error() string { return string(e) }
