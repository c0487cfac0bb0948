package hostcall

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// tempDir is t.TempDir with symlinks resolved, so expected paths match.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustWrite(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// grantDir grants reads, writes and execs under dir (resolved) and users.
func grantDir(t testing.TB, dir string) trust.Chain {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return trust.Chain{{
		FSRead:  []string{real + "/**"},
		FSWrite: []string{real + "/**"},
		Exec:    []string{"/bin/sh", "/usr/bin/*", "/bin/*", real + "/**"},
		Users:   true,
	}}
}
