package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// MmapCodeFile maps size bytes of f from offset, a multiple of the page
// size, as read-only executable code backed by the page cache (ccm patch,
// third_party/README.md): no copy, and only the pages a run executes stay
// resident. Unmap it with MunmapCodeSegment.
func MmapCodeFile(f *os.File, offset int64, size int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), offset, size, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
}

// ReleaseCodePages drops a MmapCodeFile mapping's pages from the process;
// they are read back from the page cache when executed (ccm patch).
func ReleaseCodePages(b []byte) error {
	return unix.Madvise(b, unix.MADV_DONTNEED)
}
