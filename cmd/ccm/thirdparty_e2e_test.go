package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// copyModule copies a committed .wasm (repository-relative) to dir/name and
// returns its sha256.
func copyModule(t *testing.T, from, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", from))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

const probeModule = "testdata/plugins/probe/probe.wasm"

// vendorTree is a parent manifest that applies a vendor's manifest behind
// allow_apply: false and grants; the vendor declares the probe plugin with
// pin and uses it to write inside and outside its grant.
func vendorTree(t *testing.T, pin func(sum string) string) string {
	t.Helper()
	dir := t.TempDir()
	sum := copyModule(t, probeModule, filepath.Join(dir, "vendor", "plugins"), "probe.wasm")
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - apply:
        - vendor/m.yaml:
            allow_apply: false
            grants:
              fs_read: ["@DIR@/vendor/**"]
              fs_write: ["@DIR@/vendor/data/**"]
    - file:
        - @DIR@/after: {ensure: present, content: "x", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	writeManifest(t, dir, "vendor/m.yaml", `
ccm:
  plugins:
    - path: plugins/probe.wasm
      sha256: `+pin(sum)+`
  resources:
    - probe:
        - inside: {write: "@DIR@/vendor/data/out", size: 3}
        - outside: {write: "@DIR@/escape", size: 3}
`)
	if err := os.Mkdir(filepath.Join(dir, "vendor", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestThirdPartyPluginInVendorScope(t *testing.T) {
	dir := vendorTree(t, func(sum string) string { return sum })
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (one refused write)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if e := out.event(t, "probe#inside"); e.Failed || !e.Changed {
		t.Errorf("probe#inside: %+v", e)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "vendor", "data", "out")); err != nil || len(b) != 3 {
		t.Errorf("vendor/data/out: %q, %v", b, err)
	}
	e := out.event(t, "probe#outside")
	if msg := strings.Join(e.Error, " "); !e.Failed || !strings.Contains(msg, "fs_write not granted for "+dir+"/escape") {
		t.Errorf("probe#outside should be refused by the vendor's grant: %+v", e)
	}
	if _, err := os.Lstat(filepath.Join(dir, "escape")); err == nil {
		t.Error("the plugin wrote outside its grant")
	}
	if e := out.event(t, "file#"+dir+"/after"); e.Failed {
		t.Errorf("the parent did not carry on: %+v", e)
	}
}

func TestThirdPartyPluginRefusals(t *testing.T) {
	tests := []struct {
		name   string
		tree   func(t *testing.T) string
		code   int
		stderr string // for exit 2
		event  string // failed event (exit 1)
		want   string
	}{
		{
			name: "wrong pin",
			tree: func(t *testing.T) string {
				return vendorTree(t, func(string) string { return strings.Repeat("0", 64) })
			},
			code: 1, event: "apply#vendor/m.yaml",
			want: "ccm.plugins[0]: plugin @DIR@/vendor/plugins/probe.wasm: sha256 mismatch: pinned " + strings.Repeat("0", 64) + ", the file has @SUM@",
		},
		{
			name: "the type in the parent",
			tree: func(t *testing.T) string {
				dir := vendorTree(t, func(sum string) string { return sum })
				writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - apply:\n        - vendor/m.yaml: {}\n    - probe:\n        - inparent: {write: \"@DIR@/vendor/data/out\", size: 3}\n")
				return dir
			},
			code: 2, want: `m.yaml:6: probe#inparent: resource type "probe": unknown resource type: no plugin provides it`,
		},
		{
			name: "a plugin claiming type file",
			tree: func(t *testing.T) string {
				dir := t.TempDir()
				copyModule(t, "plugins/wasm/file.wasm", filepath.Join(dir, "vendor"), "notfile.wasm")
				writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - apply:\n        - vendor/m.yaml: {allow_apply: false}\n")
				writeManifest(t, dir, "vendor/m.yaml", "ccm:\n  plugins: [notfile.wasm]\n  resources:\n    - file:\n        - @DIR@/vendor/out: {ensure: present, content: x, owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n")
				return dir
			},
			code: 1, event: "apply#vendor/m.yaml",
			want: `vendor/m.yaml:2: ccm.plugins[0]: plugin @DIR@/vendor/notfile.wasm: provides type "file", which is built in: resource type already provided; a plugin may not shadow a built-in type`,
		},
		{
			name: "a wrong pin at the top",
			tree: func(t *testing.T) string {
				dir := t.TempDir()
				copyModule(t, probeModule, dir, "probe.wasm")
				writeManifest(t, dir, "m.yaml", "ccm:\n  plugins:\n    - {path: probe.wasm, sha256: "+strings.Repeat("ab", 32)+"}\n  resources:\n    - probe:\n        - x: {write: \"@DIR@/out\", size: 3}\n")
				return dir
			},
			code: 2, want: "m.yaml:3: ccm.plugins[0]: plugin @DIR@/probe.wasm: sha256 mismatch",
		},
	}
	probeSum := copyModule(t, probeModule, t.TempDir(), "probe.wasm")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.tree(t)
			want := strings.NewReplacer("@DIR@", dir, "@SUM@", probeSum).Replace(tt.want)
			out, res := applyJSON(t, dir, "m.yaml")
			if res.Code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", res.Code, tt.code, res.Stdout, res.Stderr)
			}
			if tt.code == 2 {
				if !strings.Contains(res.Stderr, want) {
					t.Fatalf("stderr:\n%s\nwant:\n%s", res.Stderr, want)
				}
			} else if e := out.event(t, tt.event); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), want) {
				t.Fatalf("%s: %v\nwant:\n%s", tt.event, e.Error, want)
			}
			for _, f := range []string{"vendor/data/out", "vendor/out", "out", "escape"} {
				if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
}

// TestOperatorPlugins: a TYPE.wasm in a CCM_PLUGIN_PATH directory is a type
// everywhere, a child may not redeclare it, and `ccm plugin` lists and
// inspects it.
func TestOperatorPlugins(t *testing.T) {
	dir := t.TempDir()
	opDir := filepath.Join(dir, "op")
	sum := copyModule(t, probeModule, opDir, "probe.wasm")
	copyModule(t, probeModule, filepath.Join(dir, "c"), "probe.wasm")
	env := []string{"CCM_PLUGIN_PATH=" + opDir + ":" + filepath.Join(dir, "missing")}
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - apply:\n        - c/m.yaml: {}\n    - apply:\n        - d/m.yaml: {}\n")
	writeManifest(t, dir, "c/m.yaml", "ccm:\n  plugins: [probe.wasm]\n  resources:\n    - probe:\n        - redeclared: {}\n")
	writeManifest(t, dir, "d/m.yaml", "ccm:\n  resources:\n    - probe:\n        - inchild: {write: \"@DIR@/out\", size: 1}\n")

	res := ccmtest.Run(t, dir, env, "apply", "--json", "m.yaml")
	var out runOutput
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil || res.Code != 1 {
		t.Fatalf("exit %d (%v)\n%s\n%s", res.Code, err, res.Stdout, res.Stderr)
	}
	if e := out.event(t, "probe#inchild"); e.Failed {
		t.Errorf("an operator plugin is visible in a child: %v", e.Error)
	}
	e := out.event(t, "apply#c/m.yaml")
	if want := `provides type "probe", which the operator installed as ` + opDir + "/probe.wasm"; !strings.Contains(strings.Join(e.Error, " "), want) {
		t.Errorf("redeclaring an operator type: %v\nwant %s", e.Error, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing plugin directory was created")
	}

	t.Run("list", func(t *testing.T) {
		res := ccmtest.Run(t, dir, env, "plugin", "list")
		if res.Code != 0 {
			t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
		}
		for _, want := range []string{"TYPE", "file ", "built-in", "probe ", "1.0.0", opDir + "/probe.wasm", "test"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("list lacks %q:\n%s", want, res.Stdout)
			}
		}
		res = ccmtest.Run(t, dir, env, "plugin", "list", "--json")
		var list []pluginJSON
		if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil || res.Code != 0 {
			t.Fatalf("exit %d: %v\n%s", res.Code, err, res.Stdout)
		}
		var found, builtin bool
		for _, p := range list {
			switch p.Type {
			case "probe":
				found = p.Source == opDir+"/probe.wasm" && p.SHA256 == sum && p.Version == "1.0.0" && p.Error == ""
			case "file":
				builtin = p.Source == "built-in" && p.Error == ""
			}
		}
		if !found || !builtin {
			t.Errorf("list --json: %+v", list)
		}
	})

	t.Run("inspect", func(t *testing.T) {
		for _, arg := range []string{"probe", "c/probe.wasm"} {
			res := ccmtest.Run(t, dir, env, "plugin", "inspect", arg)
			if res.Code != 0 {
				t.Fatalf("inspect %s: exit %d\n%s", arg, res.Code, res.Stderr)
			}
			for _, want := range []string{"type:", "probe", "abi:", "sha256:", sum, "providers:", "test", "ensure:", "present, absent (default present)", "capabilities:", "fs_write", "/**"} {
				if !strings.Contains(res.Stdout, want) {
					t.Errorf("inspect %s lacks %q:\n%s", arg, want, res.Stdout)
				}
			}
		}
		res := ccmtest.Run(t, dir, env, "plugin", "inspect", "--json", "c/probe.wasm")
		var p pluginJSON
		if err := json.Unmarshal([]byte(res.Stdout), &p); err != nil || res.Code != 0 {
			t.Fatalf("exit %d: %v\n%s\n%s", res.Code, err, res.Stdout, res.Stderr)
		}
		if p.Type != "probe" || p.Source != filepath.Join(dir, "c", "probe.wasm") || p.SHA256 != sum || p.ABI != 1 || p.Capabilities.FSWrite[0] != "/**" {
			t.Errorf("inspect --json: %+v", p)
		}
		res = ccmtest.Run(t, dir, env, "plugin", "inspect", "nosuch")
		if res.Code != 2 || !strings.Contains(res.Stderr, `resource type "nosuch": unknown resource type: no plugin provides it (plugin types here: archive, exec, file, package, probe, scaffold, service)`) {
			t.Errorf("inspect nosuch: exit %d\n%s", res.Code, res.Stderr)
		}
	})
}

// TestRenderKeepsDeclaredPlugins: --render prints a manifest's own
// ccm.plugins with absolute paths and the pin, so the rendered vendor
// manifest applies on its own from another directory.
func TestRenderKeepsDeclaredPlugins(t *testing.T) {
	dir := vendorTree(t, func(sum string) string { return sum })
	res := ccmtest.Run(t, dir, nil, "apply", "vendor/m.yaml", "--render")
	if res.Code != 0 {
		t.Fatalf("render: exit %d\n%s", res.Code, res.Stderr)
	}
	module := filepath.Join(dir, "vendor", "plugins", "probe.wasm")
	if !strings.Contains(res.Stdout, "path: "+module) || !strings.Contains(res.Stdout, "sha256: ") {
		t.Fatalf("rendered manifest lacks its plugins:\n%s", res.Stdout)
	}
	elsewhere := t.TempDir()
	writeManifest(t, elsewhere, "rendered.yaml", res.Stdout)
	out, res := applyJSON(t, elsewhere, "rendered.yaml")
	if e := out.event(t, "probe#inside"); e.Failed || !e.Changed {
		t.Fatalf("probe#inside from the rendered manifest: %+v\n%s", e, res.Stderr)
	}
}
