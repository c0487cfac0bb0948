package hostcall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// fsStat: a missing path is Exists=false, not an error. A followed symlink
// is checked against the grant twice: where the link is, and where it leads.
func fsStat(_ context.Context, st *State, req abi.FSStatRequest) (any, *abi.CallError) {
	l, cerr := locate(req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer func() { l.close() }()
	check := func(l *location) *abi.CallError {
		return allowed(st, access{call: abi.CallFSStat, path: req.Path, target: l.full()})
	}
	if cerr := check(l); cerr != nil {
		return nil, cerr
	}
	if l.missing != nil {
		return abi.FSStatResponse{}, nil
	}
	if pw := st.Pending.lookup(l); pw != nil {
		return pw.stat(req.Checksum, st.Names), nil
	}
	sys, err := lstatAt(l)
	if err == unix.ENOENT {
		return abi.FSStatResponse{}, nil
	}
	if err != nil {
		return nil, osError("stat", req.Path, err)
	}
	var linkTarget string
	if sys.Mode&unix.S_IFMT == unix.S_IFLNK {
		if linkTarget, err = readlinkat(l.dir, l.base); err != nil {
			return nil, osError("readlink", req.Path, err)
		}
		if req.FollowSymlinks {
			var found bool
			if l, found, cerr = followFinal(l, check); cerr != nil {
				return nil, cerr
			}
			if !found {
				return abi.FSStatResponse{}, nil
			}
			if pw := st.Pending.lookup(l); pw != nil {
				return pw.stat(req.Checksum, st.Names), nil
			}
			if sys, err = lstatAt(l); err != nil {
				return nil, osError("stat", req.Path, err)
			}
			linkTarget = ""
		}
	}
	resp := statOf(&sys, st.Names)
	resp.LinkTarget = linkTarget
	if req.Checksum && sys.Mode&unix.S_IFMT == unix.S_IFREG {
		// sys is l's lstat of a moment ago: the check openContent makes
		// before its open. The fstat after the open is made as always.
		if cerr := contentFile(st, &sys, req.Path, "checksum"); cerr != nil {
			return nil, cerr
		}
		fd, cerr := openChecked(st, l, req.Path, "checksum")
		if cerr != nil {
			return nil, cerr
		}
		sum, err := sha256OfFD(fd)
		_ = unix.Close(fd)
		if err != nil {
			return nil, osError("checksum", req.Path, err)
		}
		resp.SHA256 = sum
	}
	return resp, nil
}

func statOf(sys *unix.Stat_t, names *NameCache) abi.FSStatResponse {
	resp := abi.FSStatResponse{
		Exists: true,
		Type:   fileType(sys.Mode),
		Mode:   sys.Mode & 0o7777,
		Size:   sys.Size,
		MTime:  sys.Mtim.Sec,
		UID:    int(sys.Uid),
		GID:    int(sys.Gid),
	}
	resp.Owner, resp.Group = names.owner(resp.UID), names.group(resp.GID)
	return resp
}

// openContent opens the file at l (already checked, final symlink followed)
// for reading its content. Content is read only from a regular file: a FIFO
// would block the host, a device is never content. The open does not follow
// a symlink and does not block (O_NONBLOCK), and what was opened is checked
// again with fstat. In a confined scope a file with more than one hard link
// is refused: its other names may be outside the grant (/etc/shadow linked
// into the granted directory), and the host cannot know where they are.
func openContent(st *State, l *location, path, op string) (*os.File, *abi.CallError) {
	if sys, err := lstatAt(l); err != nil {
		return nil, osError(op, path, err)
	} else if cerr := contentFile(st, &sys, path, op); cerr != nil {
		return nil, cerr
	}
	fd, cerr := openChecked(st, l, path, op)
	if cerr != nil {
		return nil, cerr
	}
	return os.NewFile(uintptr(fd), l.full()), nil
}

// openChecked is openContent's open and its check after it, for a caller
// that made the check before it (contentFile of a fresh lstat of l).
func openChecked(st *State, l *location, path, op string) (int, *abi.CallError) {
	fd, err := unix.Openat(l.dir, l.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, osError(op, path, err)
	}
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil {
		_ = unix.Close(fd)
		return -1, osError(op, path, err)
	}
	if cerr := contentFile(st, &sys, path, op); cerr != nil {
		_ = unix.Close(fd)
		return -1, cerr
	}
	return fd, nil
}

func contentFile(st *State, sys *unix.Stat_t, path, op string) *abi.CallError {
	if sys.Mode&unix.S_IFMT != unix.S_IFREG {
		return &abi.CallError{Code: abi.CodeIO, Message: op + " " + path + ": not a regular file (" + fileType(sys.Mode) + ")"}
	}
	return hardLinkRule(st, sys, op, path)
}

// hardLinkRule refuses, in a confined scope, a file with more than one hard
// link (see openContent): reading, hashing, copying, chmod and chown of it.
// Not only regular files: a second link to a device node or a symlink
// outside the grant is as dangerous to chmod or chown. Replacing it (a write
// renames a new file over the name) and removing the name stay allowed:
// they touch only the name in the grant. Directories cannot be hard-linked.
func hardLinkRule(st *State, sys *unix.Stat_t, op, path string) *abi.CallError {
	if sys.Mode&unix.S_IFMT != unix.S_IFDIR && sys.Nlink > 1 && st.Caller.Grants.Confined() {
		return denied("%s refused for %s: it has %d hard links, and in a scope confined by grants a hard-linked file may be a file outside the grant (replace or remove it instead)", op, path, sys.Nlink)
	}
	return nil
}

// sha256OfFD hashes what fd reads to its end, reading the fd directly: every stable file's stat
// hashes it, and an os.File costs an allocation, a finalizer and an
// attempt to register the fd with the poller (a syscall) for nothing.
func sha256OfFD(fd int) (string, error) {
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	for {
		n, err := unix.Read(fd, *buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", err
		}
		if n == 0 {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		h.Write((*buf)[:n])
	}
}

// copyBuffers are the buffers sha256Of reads through: every ccm_fs_stat
// with a checksum hashes a file.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// locateReadable locates path for reading its content: where it is, then
// where its final symlink leads, each checked against fs_read for call. The
// caller closes the location.
func locateReadable(st *State, call, path string) (*location, *abi.CallError) {
	l, cerr := locate(path)
	if cerr != nil {
		return nil, cerr
	}
	check := func(l *location) *abi.CallError {
		return allowed(st, access{call: call, path: path, target: l.full()})
	}
	if cerr := check(l); cerr != nil {
		l.close()
		return nil, cerr
	}
	l, found, cerr := followFinal(l, check)
	if cerr == nil && !found {
		cerr = &abi.CallError{Code: abi.CodeNotFound, Message: path + " does not exist"}
	}
	if cerr != nil {
		l.close()
		return nil, cerr
	}
	return l, nil
}

// openReadable opens path's content for call (see locateReadable and
// openContent).
func openReadable(st *State, call, path, op string) (*os.File, *abi.CallError) {
	l, cerr := locateReadable(st, call, path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	return openContent(st, l, path, op)
}

// FSRead serves ccm_fs_read; the engine's own reads (host.Host.ReadFile) and
// the reads of registered plugin files come here too, through the same check.
func FSRead(_ context.Context, st *State, req abi.FSReadRequest) (any, *abi.CallError) {
	limit := st.RequestBytes
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	f, cerr := openReadable(st, abi.CallFSRead, req.Path, "read")
	if cerr != nil {
		return nil, cerr
	}
	defer f.Close()
	if req.Chunk {
		return readChunk(f, req, limit)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &abi.CallError{Code: abi.CodeTooLarge, Message: "read " + req.Path + ": file is larger than the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, osError("read", req.Path, err)
	}
	if int64(len(data)) > limit {
		return nil, &abi.CallError{Code: abi.CodeTooLarge, Message: "read " + req.Path + ": file is larger than the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
	}
	return abi.FSReadResponse{Content: data}, nil
}

func fsList(_ context.Context, st *State, req abi.FSListRequest) (any, *abi.CallError) {
	l, cerr := locateReadable(st, abi.CallFSList, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	fd, err := unix.Openat(l.dir, l.base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, osError("list", req.Path, err)
	}
	f := os.NewFile(uintptr(fd), l.full())
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, osError("list", req.Path, err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	out := abi.FSListResponse{Entries: make([]abi.DirEntry, 0, len(entries))}
	for _, e := range entries {
		out.Entries = append(out.Entries, abi.DirEntry{Name: e.Name(), Type: TypeOf(e.Type())})
	}
	return out, nil
}
