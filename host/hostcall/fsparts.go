package hostcall

import (
	"crypto/sha256"
	"encoding/hex"
	"os"

	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// PartInode identifies the staging file a "first" part created, so "next"
// and "last" write only to that inode: a name swapped meanwhile (a hard
// link to another file, a new file) is refused.
type PartInode struct{ dev, ino uint64 }

// fsWritePart is a ccm_fs_write with Part set: a file written in pieces
// into a staging file beside the target, renamed over it by the last part
// with the discipline of a whole write (fswrite.go). Each part passes the
// same checks as a whole write and holds the directory's writers' lock.
func fsWritePart(st *State, req abi.FSWriteRequest) (any, *abi.CallError) {
	if req.Source != "" {
		return nil, invalid("%s %s: part %q cannot copy a source", abi.CallFSWrite, req.Path, req.Part)
	}
	if req.Part != "first" && req.Part != "next" && req.Part != "last" {
		return nil, invalid("%s %s: part %q is not first, next or last", abi.CallFSWrite, req.Path, req.Part)
	}
	st.Pending.completeAll(st)
	w, cerr := prepareWrite(st, req)
	if cerr != nil {
		return nil, cerr
	}
	defer w.close()
	if cerr := w.owners(st); cerr != nil {
		return nil, cerr
	}
	l := w.l
	dfd, err := unix.Openat(l.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, osError("open directory of", req.Path, err)
	}
	dir := os.NewFile(uintptr(dfd), l.dirPath)
	if err := lockDir(dfd); err != nil {
		dir.Close()
		return nil, osError("lock directory of", req.Path, err)
	}
	unlock := func() { _ = unix.Flock(dfd, unix.LOCK_UN) }
	name, key := partName(l.base), l.full()
	if req.Part == "first" {
		err = firstPart(st, dfd, name, key, req.Content)
		unlock()
		dir.Close()
		if err != nil {
			return nil, osError("write", req.Path, err)
		}
		return abi.Empty{}, nil
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		unlock()
		dir.Close()
		return nil, &abi.CallError{Code: abi.CodeInvalid, Message: req.Path + ": part " + req.Part + " without a first part in this call (" + err.Error() + ")"}
	}
	f := os.NewFile(uintptr(fd), name)
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil || st.Parts[key] != (PartInode{uint64(sys.Dev), sys.Ino}) || sys.Nlink != 1 {
		f.Close()
		unlock()
		dir.Close()
		return nil, invalid("%s: part %s: the staging file is not the one the first part of this call created", req.Path, req.Part)
	}
	_, err = f.Write(req.Content)
	if err == nil && req.Part == "last" {
		err = f.Sync()
		if err == nil && (w.uid != -1 || w.gid != -1) {
			err = unix.Fchown(fd, w.uid, w.gid)
		}
		if err == nil {
			err = unix.Fchmod(fd, req.Mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = unix.Renameat(dfd, name, dfd, l.base)
		}
		delete(st.Parts, key)
		if err != nil {
			_ = unix.Unlinkat(dfd, name, 0)
		}
	} else {
		f.Close()
	}
	unlock()
	if err != nil {
		dir.Close()
		return nil, osError("write", req.Path, err)
	}
	if req.Part == "last" {
		st.Dirs.add(l.dirPath, dir) // durability of the rename, at the end of the call
	} else {
		dir.Close()
	}
	return abi.Empty{}, nil
}

// firstPart replaces any stale staging file with a new one holding content
// and records its inode for the parts that follow.
func firstPart(st *State, dfd int, name, key string, content []byte) error {
	if err := unix.Unlinkat(dfd, name, 0); err != nil && err != unix.ENOENT {
		return err
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		_ = unix.Unlinkat(dfd, name, 0)
		return err
	}
	if st.Parts == nil {
		st.Parts = map[string]PartInode{}
	}
	st.Parts[key] = PartInode{uint64(sys.Dev), sys.Ino}
	return nil
}

// partName is the staging file of a write in parts of base (see tempName).
func partName(base string) string {
	if t := "." + base + ".ccm-part"; len(t) <= 255 {
		return t
	}
	sum := sha256.Sum256([]byte(base))
	return ".ccm-part-" + hex.EncodeToString(sum[:16])
}
