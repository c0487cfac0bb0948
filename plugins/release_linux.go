package plugins

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Release tells the modules that the host has compiled module name and will
// not read its bytes again: the pages wholly inside them leave the process
// (madvise MADV_DONTNEED), 3.6 MiB of resident memory for the file plugin.
//
// The bytes are initialized data of the ccm binary, a private mapping of
// its file that nothing writes to (Lend's contract), so dropping the pages
// loses nothing: a later read (another host in this process) faults them
// in from the binary again, unchanged. The pages at either end, which may
// hold other variables, are kept.
func (m modules) Release(name string) {
	b, ok := m[name]
	if !ok || len(b) == 0 {
		return
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (ps - start%ps) % ps                         // the first whole page
	hi := uintptr(len(b)) - (start+uintptr(len(b)))%ps // the end of the last
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo:hi], unix.MADV_DONTNEED)
}
