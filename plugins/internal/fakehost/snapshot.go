package fakehost

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Snapshot describes every path under root (type, mode, owner, size, mtime,
// content hash, link target), so a test can prove a read-only run left the
// tree exactly as it was.
func Snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%s %o %d:%d %d %d", fileType(fi.Mode()), sys.Mode&0o7777, sys.Uid, sys.Gid, fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return out
}

func fileType(m fs.FileMode) string {
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
