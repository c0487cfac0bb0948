package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestRenderGolden runs `ccm apply --render` on each testdata/render case
// and compares stdout with its expected.yaml (refresh with -update).
func TestRenderGolden(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("..", "..", "testdata", "render", "*", "manifest.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no render cases: %v", err)
	}
	for _, m := range cases {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res := ccmtest.Run(t, dir, []string{"CCM_FACTS_DIRS="}, "apply", "manifest.yaml", "--render", "--fact", "role=web")
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
			}
			golden := filepath.Join(dir, "expected.yaml")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(res.Stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if res.Stdout != string(want) {
				t.Fatalf("--render output differs from %s (run with -update after checking it):\n%s", golden, res.Stdout)
			}
		})
	}
}
