// Package fstree describes a directory tree, so that a test can prove a run
// left it exactly as it was: the sentinel trees outside a grant in the host
// call and end-to-end tests, the trees a read-only run must not touch in
// the plugins' fixture tests.
package fstree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Describe returns one line per path under root (root included), sorted:
// the path, its type, permission and setid bits, owner uid:gid, size and
// modification time, then a regular file's content hash or a symlink's
// target. Symlinks are not followed. The link count is left out: removing
// a link inside a grant (a planted temp file) lowers the count of a file
// outside it, and that is no change to the file. Two equal descriptions mean nothing
// under root changed that a run could change through the filesystem.
func Describe(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := fi.Sys().(*syscall.Stat_t)
		line := fmt.Sprintf("%s %s %o %d:%d %d %d", p, fileType(fi.Mode()), sys.Mode&0o7777, sys.Uid, sys.Gid, fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatalf("describe the tree %s: %v", root, err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
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
