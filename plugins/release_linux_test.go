package plugins_test

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ccm-dev/ccm/plugins"
)

// TestReleaseKeepsBytes: Release drops the embedded module's pages from the
// process, and the bytes read back unchanged afterwards (they come from the
// binary's file again; were they anonymous memory, they would read as
// zeros), as the module on disk, for as many releases as hosts in the
// process.
func TestReleaseKeepsBytes(t *testing.T) {
	fsys := plugins.Modules()
	m := fsys.(interface {
		Lend(string) ([]byte, error)
		Release(string)
	})
	lent, err := m.Lend("file.wasm")
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(lent)
	mid := uintptr(unsafe.Pointer(&lent[len(lent)/2]))
	for range 3 {
		m.Release("file.wasm")
		if present(t, mid) {
			t.Fatal("the module's pages are still mapped after Release")
		}
		if sha256.Sum256(lent) != want {
			t.Fatal("the module's bytes changed after Release")
		}
		if !present(t, mid) {
			t.Fatal("reading the module did not map its pages again")
		}
	}
	m.Release("nosuch.wasm") // harmless
	onDisk, err := os.ReadFile(filepath.Join("wasm", "file.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(onDisk) != want {
		t.Fatal("the released module differs from wasm/file.wasm")
	}
}

// present reads the page map: whether the page holding addr is mapped in
// this process (bit 63).
func present(t *testing.T, addr uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no page map: %v", err)
	}
	defer f.Close()
	var e [8]byte
	if _, err := f.ReadAt(e[:], int64(addr/uintptr(os.Getpagesize()))*8); err != nil {
		t.Skipf("page map: %v", err)
	}
	return binary.LittleEndian.Uint64(e[:])>>63 == 1
}
