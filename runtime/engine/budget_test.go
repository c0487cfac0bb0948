package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestApplyCycleAnySpelling: a manifest that applies itself, under any
// path that resolves to the same file, fails at once with a cycle error
// naming the chain; it does not recurse to the depth limit.
func TestApplyCycleAnySpelling(t *testing.T) {
	tests := []struct {
		name  string
		child string // how m.yaml names the file that applies m.yaml back
		setup func(t *testing.T, dir string)
	}{
		{name: "same name", child: "m.yaml"},
		{name: "dot slash", child: "./m.yaml"},
		{name: "dot dot", child: "sub/../m.yaml"},
		{name: "absolute", child: "@DIR@/m.yaml"},
		{name: "symlink", child: "link.yaml", setup: func(t *testing.T, dir string) {
			if err := os.Symlink("m.yaml", filepath.Join(dir, "link.yaml")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "hard link", child: "hard.yaml", setup: func(t *testing.T, dir string) {
			if err := os.Link(filepath.Join(dir, "m.yaml"), filepath.Join(dir, "hard.yaml")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"sub/keep": ""})
			child := strings.ReplaceAll(tt.child, "@DIR@", dir)
			// Three spellings of the same child: the fan-out that used to
			// grow as 3^10.
			m := fmt.Sprintf("ccm:\n  resources:\n    - mark:\n        - top: {}\n    - apply:\n        - %s: {}\n        - ./%s: {}\n        - sub/../%s: {}\n", child, child, child)
			if filepath.IsAbs(child) {
				m = fmt.Sprintf("ccm:\n  resources:\n    - mark:\n        - top: {}\n    - apply:\n        - %s: {}\n", child)
			}
			if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			f := &fakePlugins{}
			start := time.Now()
			res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if res.Summary.Total > 4 {
				t.Fatalf("%d events, want the top mark and at most three failed applies: %v", res.Summary.Total, refs(res))
			}
			for _, ev := range res.Events {
				if ev.Type != "apply" {
					continue
				}
				msg := strings.Join(ev.Error, "; ")
				if !ev.Failed || !strings.Contains(msg, "apply cycle: ") || !strings.Contains(msg, "m.yaml applies ") {
					t.Errorf("%s: %q, want an apply cycle error naming the chain", ev.Ref(), msg)
				}
			}
		})
	}
}

// TestApplyCycleDeeper: a -> b -> a is a cycle too, named with its chain.
func TestApplyCycleDeeper(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.yaml":   "ccm:\n  resources:\n    - apply:\n        - b/b.yaml: {}\n",
		"b/b.yaml": "ccm:\n  resources:\n    - apply:\n        - ../a.yaml: {}\n",
	})
	res, err := run(t, &fakePlugins{}, filepath.Join(dir, "a.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := event(t, res, "apply#../a.yaml")
	if msg := strings.Join(ev.Error, "; "); !strings.Contains(msg, "apply cycle: a.yaml is already being applied (a.yaml applies b/b.yaml applies a.yaml)") {
		t.Fatalf("error %q", msg)
	}
}

// TestApplyManifestCap: a tree of distinct files that fans out past
// MaxManifests stops at the cap, with an error naming it.
func TestApplyManifestCap(t *testing.T) {
	// Each level applies the next one four times under different
	// spellings: 4^6 = 4096 manifests without the cap.
	files := map[string]string{}
	const levels = 6
	for i := 0; i < levels; i++ {
		next := fmt.Sprintf("l%d.yaml", i+1)
		files[fmt.Sprintf("l%d.yaml", i)] = fmt.Sprintf("ccm:\n  resources:\n    - apply:\n        - %s: {}\n        - ./%s: {}\n        - x/../%s: {}\n        - ./x/../%s: {}\n", next, next, next, next)
	}
	files[fmt.Sprintf("l%d.yaml", levels)] = "ccm:\n  resources:\n    - mark:\n        - leaf: {}\n"
	files["x/keep"] = ""
	dir := tree(t, files)
	start := time.Now()
	res, err := run(t, &fakePlugins{}, filepath.Join(dir, "l0.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	var capped int
	for _, ev := range res.Events {
		if strings.Contains(strings.Join(ev.Error, "; "), fmt.Sprintf("too many manifests: this run has loaded %d, the most one run may load (max_manifests)", MaxManifests)) {
			capped++
		}
	}
	if capped == 0 {
		t.Fatalf("no apply failed on the manifest cap (%d events)", res.Summary.Total)
	}
}
