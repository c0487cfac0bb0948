package hostcall

import (
	"io/fs"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// checkMode refuses bits beyond the 0o7777 permission bits of the abi (the
// setuid and setgid bits are then checked against the grants: setidRule).
func checkMode(m uint32) *abi.CallError {
	if m&^0o7777 != 0 {
		return invalid("mode %#o has bits beyond 0o7777", m)
	}
	return nil
}

// TypeOf names a directory entry's type as ccm_fs_list does.
func TypeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}
