package host

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestLayers: the plugin runtime (host) imports the OS layer
// (host/hostcall), never the reverse, and each imports only the ccm
// packages doc.go lists ("Imports").
func TestLayers(t *testing.T) {
	const ccm = "github.com/ccm-dev/ccm/"
	for dir, allowed := range map[string][]string{
		".":        {"host/hostcall", "internal/privatedir", "runtime/hostapi", "runtime/trust", "sdk/abi"},
		"hostcall": {"runtime/trust", "sdk/abi", "sdk/shellwords"},
	} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if rest, ok := strings.CutPrefix(imp, ccm); ok && !slices.Contains(allowed, rest) {
				t.Errorf("package %s imports %s; it may import only %v of ccm (host/doc.go, \"Imports\")", pkg.Name, imp, allowed)
			}
		}
	}
}
