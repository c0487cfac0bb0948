package host

import (
	"context"
	"os"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// TestConcurrentLoadsFromTheCache loads two plugins at once, again and
// again, each time in a fresh Host on a warm persistent cache: the path on
// which wazero v1.12 could hand one plugin the Extism kernel another was
// still building (kernelpin.go), seen once in CI as a panic in
// moduleEngine.NewFunction. The window is narrow: this test did not hit it
// in 36 loads without the pin, so it also checks that the pin is in place.
func TestConcurrentLoadsFromTheCache(t *testing.T) {
	hostile, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	modules := map[string][]byte{"probe": probeWasm, "hostile": hostile}
	cache := t.TempDir()
	for i := range 12 {
		h, err := New(WithModules(modules), WithCacheDir(cache))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Preload(context.Background(), trust.Caller{}, []string{"probe", "hostile"}); err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		if h.kernel.pins[true] == nil {
			t.Fatalf("load %d: the kernel is not pinned", i)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
