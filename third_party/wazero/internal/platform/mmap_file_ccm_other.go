//go:build !linux

package platform

import (
	"errors"
	"os"
)

// MmapCodeFile is only done on Linux (ccm patch, third_party/README.md):
// elsewhere, macOS on arm64 for one, executable file mappings need a code
// signature. Callers read the code instead.
func MmapCodeFile(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("code file mappings are only used on linux")
}

// ReleaseCodePages does nothing where MmapCodeFile is not used.
func ReleaseCodePages([]byte) error { return nil }
