package facts

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree writes files (path relative to root → content) and symlinks
// (path → target, relative to root) under root.
func tree(t *testing.T, root string, files, links map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, target := range links {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, target), p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadCustom(t *testing.T) {
	tests := []struct {
		name         string
		files, links map[string]string
		dirs         []string // relative to the temp root; "" entries kept as given
		want         map[string]any
		wantWarnings []string // substrings, in order
		wantErr      string
	}{
		{name: "missing dirs are nothing", dirs: []string{"sys", "user"}, want: map[string]any{}},
		{name: "order within a dir", dirs: []string{"sys"}, files: map[string]string{
			"sys/facts.json":        `{"a": "json", "b": "json", "c": "json", "d": "json", "nest": {"x": 1}}`,
			"sys/facts.yaml":        "b: yaml\nc: yaml\nd: yaml\nnest: {y: 2}\n",
			"sys/facts.d/20-z.yaml": "d: 20\n",
			"sys/facts.d/10-a.json": `{"c": "10", "d": "10"}`,
		}, want: map[string]any{"a": "json", "b": "yaml", "c": "10", "d": 20, "nest": map[string]any{"x": 1, "y": 2}}},
		{name: "user dir wins over system dir", dirs: []string{"sys", "user"}, files: map[string]string{
			"sys/facts.d/99.yaml": "env: prod\nsite: a\n",
			"user/facts.json":     `{"env": "dev"}`,
		}, want: map[string]any{"env": "dev", "site": "a"}},
		{name: "other extensions ignored", dirs: []string{"sys"}, files: map[string]string{
			"sys/facts.yml":          "a: 1\n",
			"sys/facts.d/a.yml":      "a: 2\n",
			"sys/facts.d/b.txt":      "not: read\n",
			"sys/facts.d/c.yaml.bak": "x",
			"sys/facts.d/d.yaml":     "d: 1\n",
		}, want: map[string]any{"d": 1}},
		{name: "symlinked files skipped", dirs: []string{"sys"},
			files: map[string]string{"elsewhere/evil.yaml": "evil: true\n", "sys/facts.d/b.yaml": "b: 1\n"},
			links: map[string]string{"sys/facts.yaml": "elsewhere/evil.yaml", "sys/facts.d/a.yaml": "elsewhere/evil.yaml"},
			want:  map[string]any{"b": 1},
			wantWarnings: []string{"facts.yaml: symlinked fact files are not read",
				"facts.d/a.yaml: symlinked fact files are not read"}},
		{name: "symlinked facts.d skipped", dirs: []string{"sys"},
			files:        map[string]string{"elsewhere/x.yaml": "evil: true\n", "sys/facts.json": `{"ok": 1}`},
			links:        map[string]string{"sys/facts.d": "elsewhere"},
			want:         map[string]any{"ok": 1},
			wantWarnings: []string{"a symlinked facts.d is not read"}},
		{name: "bad yaml names the file", dirs: []string{"sys"},
			files:   map[string]string{"sys/facts.d/bad.yaml": "a: [\n"},
			wantErr: "facts.d/bad.yaml"},
		{name: "list document names the file", dirs: []string{"sys"},
			files:   map[string]string{"sys/facts.json": `[1, 2]`},
			wantErr: "facts.json: the document must be a map"},
		{name: "relative dir rejected", dirs: []string{"REL"}, wantErr: `custom facts dir "relative/dir": must be an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, tt.files, tt.links)
			var dirs []string
			for _, d := range tt.dirs {
				if d == "REL" {
					dirs = append(dirs, "relative/dir")
					continue
				}
				// Unclean paths are accepted and cleaned.
				dirs = append(dirs, root+"/./"+d+"/")
			}
			got, warnings, err := LoadCustom(dirs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadCustom: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings = %q, want %d", warnings, len(tt.wantWarnings))
			}
			for i, w := range tt.wantWarnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestLoadCustomCreatesNothing(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "etc", "choria", "ccm"), filepath.Join(root, "home", ".config", "choria", "ccm")}
	if _, _, err := LoadCustom(dirs); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("LoadCustom created %v under %s", entries, root)
	}
}

func TestDefaultDirs(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string // "-" unsets
		want []string
	}{
		{name: "xdg set", env: map[string]string{DirsEnv: "-", "XDG_CONFIG_HOME": "/cfg", "HOME": "/home/u"},
			want: []string{"/etc/choria/ccm", "/cfg/choria/ccm"}},
		{name: "xdg unset uses ~/.config", env: map[string]string{DirsEnv: "-", "XDG_CONFIG_HOME": "-", "HOME": "/home/u"},
			want: []string{"/etc/choria/ccm", "/home/u/.config/choria/ccm"}},
		{name: "relative xdg ignored", env: map[string]string{DirsEnv: "-", "XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"},
			want: []string{"/etc/choria/ccm", "/home/u/.config/choria/ccm"}},
		{name: "env override", env: map[string]string{DirsEnv: "/a:/b"}, want: []string{"/a", "/b"}},
		{name: "empty env override means none", env: map[string]string{DirsEnv: ""}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
				if v == "-" {
					os.Unsetenv(k)
				}
			}
			got := DefaultDirs()
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("DefaultDirs() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"sys/facts.yaml": "k1: sys\nk2: sys\nk3: sys\nhost: {info: {platformFamily: custom}}\n",
		"file.yaml":      "k2: file\nk3: file\n",
	}, nil)
	got, warnings, err := Load(context.Background(), Options{
		Dirs:      []string{filepath.Join(root, "sys")},
		FactsFile: filepath.Join(root, "file.yaml"),
		Facts:     []string{"k3=cli"},
	})
	if err != nil {
		t.Fatalf("Load: %v (warnings %v)", err, warnings)
	}
	for k, want := range map[string]string{"k1": "sys", "k2": "file", "k3": "cli"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %q", k, got[k], want)
		}
	}
	info := got["host"].(map[string]any)["info"].(map[string]any)
	if info["platformFamily"] != "custom" || info["hostname"] == "" {
		t.Errorf("custom facts must deep-merge over system facts: host.info = %v", info)
	}

	tree(t, root, map[string]string{"bad/facts.json": "{"}, nil)
	if _, _, err := Load(context.Background(), Options{Dirs: []string{filepath.Join(root, "bad")}}); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(root, "bad", "facts.json")) {
		t.Fatalf("bad custom file: error = %v, want it to name the file", err)
	}
}
