// Package privatedir makes, or checks, a directory that only its owner
// may write to: where ccm keeps what it will trust later (compiled machine
// code, extracted bundles, last-good copies, its run lock), a directory
// that another user made first or may write to would let them plant or
// swap it.
package privatedir

import (
	"fmt"
	"os"
	"syscall"
)

// Ensure makes dir and its missing parents with mode perm, or checks an
// existing one. It must be a directory (a link is refused, not followed),
// owned by this process's user or by root, and not writable by group or
// others. The error says which of these failed.
func Ensure(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a link?)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || (int(st.Uid) != os.Geteuid() && st.Uid != 0) {
		owner := "unknown"
		if ok {
			owner = fmt.Sprint(st.Uid)
		}
		return fmt.Errorf("%s is owned by uid %s, not by uid %d or root", dir, owner, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o)", dir, fi.Mode().Perm())
	}
	return nil
}
