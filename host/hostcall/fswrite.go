package hostcall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// locateChecked locates path (parents resolved on descriptors, see
// location) and passes the one check for call on its resolved path. The
// caller closes the location.
func locateChecked(st *State, call, path string) (*location, *abi.CallError) {
	l, cerr := locate(path)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: call, path: path, target: l.full()}); cerr != nil {
		l.close()
		return nil, cerr
	}
	if path == "/" {
		l.close()
		return nil, invalid("refusing to modify /")
	}
	return l, nil
}

// needParent fails a call whose target's parent directory does not exist.
func needParent(l *location) *abi.CallError {
	if l.missing == nil {
		return nil
	}
	return &abi.CallError{Code: abi.CodeNotFound, Message: "parent directory " + l.parentPath() + " does not exist"}
}

// setidRule refuses a mode with the setuid or setgid bit unless every grant
// in the caller's chain says setid: true (the unconfined root has it).
func setidRule(st *State, call, path string, mode uint32) *abi.CallError {
	if mode&0o6000 != 0 && !st.Caller.Grants.AllowsSetid() {
		return denied("%s refused for %s: mode %#o sets the setuid or setgid bit; add setid: true to grants in the apply", call, path, mode)
	}
	return nil
}

// fsWrite writes atomically: a temp file beside the target (mode 0600 while
// it fills), write, fsync, chown, chmod (after chown, which may clear setuid
// bits), rename over the target, fsync the directory (when the plugin call
// ends: see DirSyncs). On failure the temp file is removed and the target is
// untouched. A symlink or a hard link at the target is replaced by the
// rename, never followed or written through.
//
// The temp file's name is derived from the target's (tempName), so an
// interrupted write (ccm killed) leaves at most one stale temp file per
// target, and the next write of the same target removes it first. Writers
// of one directory take a flock on it around this, so two ccm processes
// never remove each other's temp file mid-write. A whole-content write
// in a plugin call with State.Pending is put off after its fill
// (commitLater, pending.go), and filled unnamed where the filesystem
// allows it (fillAnon).
func fsWrite(_ context.Context, st *State, req abi.FSWriteRequest) (any, *abi.CallError) {
	if req.Part != "" {
		return fsWritePart(st, req) // fsparts.go
	}
	if req.Source != "" {
		st.Pending.completeAll(st) // the source may be a pending write's target
	}
	w, cerr := prepareWrite(st, req)
	if cerr != nil {
		return nil, cerr
	}
	defer w.close()
	if st.Pending != nil && req.Source == "" {
		key, id, dir := pendingKey(w.l)
		st.Pending.completeKey(st, key) // a second write of a pending target
		if cerr := w.owners(st); cerr != nil {
			return nil, cerr
		}
		if cerr := w.commitLater(st, key, id, dir.Dev); cerr != nil {
			return nil, cerr
		}
		return abi.Empty{}, nil
	}
	st.Pending.complete(st, w.l)
	var src io.Reader // stays a nil interface without a source
	if req.Source != "" {
		// Copying a source reveals its content: it needs fs_read on it.
		f, cerr := openReadable(st, abi.CallFSRead, req.Source, "open source")
		if cerr != nil {
			return nil, cerr
		}
		defer f.Close()
		src = f
	}
	if cerr := w.owners(st); cerr != nil {
		return nil, cerr
	}
	if cerr := w.commit(st, src); cerr != nil {
		return nil, cerr
	}
	return abi.Empty{}, nil
}

// fileWrite is one ccm_fs_write (or ccm_net_fetch download) checked and
// located: prepareWrite, owners, then commit fills and renames it.
type fileWrite struct {
	req      abi.FSWriteRequest
	l        *location
	uid, gid int
}

// prepareWrite checks the mode, locates the target and passes the check
// for ccm_fs_write on it, and the setid rule.
func prepareWrite(st *State, req abi.FSWriteRequest) (*fileWrite, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	l, cerr := locateChecked(st, abi.CallFSWrite, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := setidRule(st, abi.CallFSWrite, req.Path, req.Mode); cerr != nil {
		l.close()
		return nil, cerr
	}
	return &fileWrite{req: req, l: l, uid: -1, gid: -1}, nil
}

func (w *fileWrite) close() { w.l.close() }

// owners resolves the owner and group and checks that the target's parent
// exists and the target is not a directory.
func (w *fileWrite) owners(st *State) *abi.CallError {
	var cerr *abi.CallError
	if w.uid, cerr = st.Names.uidOf(w.req.Owner); cerr != nil {
		return cerr
	}
	if w.gid, cerr = st.Names.gidOf(w.req.Group); cerr != nil {
		return cerr
	}
	if cerr := needParent(w.l); cerr != nil {
		return cerr
	}
	if sys, err := lstatAt(w.l); err == nil && sys.Mode&unix.S_IFMT == unix.S_IFDIR {
		return &abi.CallError{Code: abi.CodeExists, Message: w.req.Path + " exists as a directory"}
	}
	return nil
}

// commit fills the temp file from src (or req.Content when src is nil)
// under the directory's writers' lock and renames it over the target.
func (w *fileWrite) commit(st *State, src io.Reader) *abi.CallError {
	l := w.l
	dfd, err := unix.Openat(l.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return osError("open directory of", w.req.Path, err)
	}
	dir := os.NewFile(uintptr(dfd), l.dirPath)
	if err := lockDir(dfd); err != nil {
		dir.Close()
		return osError("lock directory of", w.req.Path, err)
	}
	tmp := tempName(l.base)
	err = writeAt(dfd, tmp, l.base, src, w.req.Content, w.uid, w.gid, w.req.Mode)
	_ = unix.Flock(dfd, unix.LOCK_UN)
	if err != nil {
		dir.Close()
		return osError("write", w.req.Path, err)
	}
	st.Dirs.add(l.dirPath, dir) // durability of the rename, at the end of the call
	return nil
}

// commitLater fills the temp file with req.Content, owner and mode set,
// and leaves its fsync and rename to st.Pending (pending.go), which keeps
// the temp file's and the directory's descriptors: the rename happens on
// them, never on a path resolved again. The file is filled unnamed and
// then linked under its temp name where the filesystem allows it
// (fillAnon); elsewhere it is filled under its temp name, under the
// directory's writers' lock, as commit does. key is the target's
// pendingKey, id and dev its directory's identity and device.
func (w *fileWrite) commitLater(st *State, key, id string, dev uint64) *abi.CallError {
	l := w.l
	dfd, own, err := st.Pending.dirFor(l, id)
	if err != nil {
		return osError("open directory of", w.req.Path, err)
	}
	pw := &pendingWrite{
		path: w.req.Path, dir: dfd, ownDir: own, dirPath: l.dirPath, tmp: tempName(l.base), base: l.base,
		sum: sha256Hex(w.req.Content),
	}
	if !st.Pending.named && tmpfileUsable(dfd, dev) {
		pw.fd, pw.sys, pw.anon, err = fillAnon(dfd, dev, pw.tmp, w.req.Content, w.uid, w.gid, w.req.Mode)
	}
	if err == nil && !pw.anon {
		if err = lockDir(dfd); err != nil {
			if own {
				_ = unix.Close(dfd)
			}
			return osError("lock directory of", w.req.Path, err)
		}
		pw.fd, pw.sys, err = fillAt(dfd, pw.tmp, w.req.Content, w.uid, w.gid, w.req.Mode)
		_ = unix.Flock(dfd, unix.LOCK_UN)
	}
	if err != nil {
		if own {
			_ = unix.Close(dfd)
		}
		return osError("write", w.req.Path, err)
	}
	st.Pending.add(st, key, pw)
	return nil
}

// noTmpfile holds the devices whose filesystem refused O_TMPFILE: their
// writes are filled under a temp name.
var noTmpfile sync.Map

// tmpfileUsable is whether a write in the directory dir (on device dev)
// can be filled unnamed.
func tmpfileUsable(dir int, dev uint64) bool {
	if _, no := noTmpfile.Load(dev); no {
		return false
	}
	procOnce.Do(func() {
		var a, b unix.Stat_t
		procOK = unix.Fstat(dir, &a) == nil &&
			unix.Stat("/proc/self/fd/"+strconv.Itoa(dir), &b) == nil &&
			a.Dev == b.Dev && a.Ino == b.Ino
	})
	return procOK
}

// procOK is whether /proc/self/fd/N leads to this process's descriptor N
// (checked once, on a directory's): an unnamed file is linked into place
// through it (linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH).
// Without it every write is filled under a temp name.
var (
	procOnce sync.Once
	procOK   bool
)

// fillAnon fills an unnamed file in the directory dir (O_TMPFILE: no name
// holds it and nobody else can open it while it fills), sets its owner
// and mode, and then, complete, links it under its temp name tmp, which
// never replaces anything there: a stale temp file an interrupted write
// left (or anything planted at that name) is removed under the
// directory's writers' lock and the link made again. The fsync to come
// (Pending) then makes the content and the link count durable before the
// rename. It returns the open file and its stat; ok is false, with
// nothing done, when the filesystem has no O_TMPFILE (the caller fills a
// temp file as fillAt does).
//
// The file is created with the mode's permission bits (the umask may
// clear some), and chown and chmod are made only when its owner, group or
// mode is not already what was asked: they would change nothing else
// (chmod last, since chown may clear setid bits). Unnamed, the file is
// never visible with its final mode but not its final owner.
func fillAnon(dir int, dev uint64, tmp string, content []byte, uid, gid int, mode uint32) (fd int, sys unix.Stat_t, ok bool, err error) {
	fd, err = unix.Openat(dir, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, mode&0o777)
	switch err {
	case nil:
	case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL:
		noTmpfile.Store(dev, true)
		return -1, sys, false, nil
	default:
		return -1, sys, false, errors.New("create temp file: " + err.Error())
	}
	err = writeAll(fd, content)
	if err == nil {
		err = unix.Fstat(fd, &sys)
	}
	changed := false
	if err == nil && (uid != -1 && uint32(uid) != sys.Uid || gid != -1 && uint32(gid) != sys.Gid) {
		err, changed = unix.Fchown(fd, uid, gid), true
	}
	if err == nil && sys.Mode&0o7777 != mode {
		err, changed = unix.Fchmod(fd, mode), true
	}
	if err == nil && changed {
		err = unix.Fstat(fd, &sys)
	}
	if err == nil && writeHook != nil {
		err = writeHook(tmp)
	}
	if err == nil {
		err = linkTemp(dir, fd, tmp)
	}
	if err != nil {
		_ = unix.Close(fd) // unnamed, the file is freed
		return -1, sys, false, err
	}
	return fd, sys, true, nil
}

// linkTemp gives the unnamed file fd the name tmp in dir. A name already
// taken is removed under the directory's writers' lock, as a stale temp
// file, and the link made again.
func linkTemp(dir, fd int, tmp string) error {
	err := linkFd(fd, dir, tmp)
	if err != unix.EEXIST {
		return wrapLink(tmp, err)
	}
	if err := lockDir(dir); err != nil {
		return err
	}
	defer unix.Flock(dir, unix.LOCK_UN)
	if err := removeStale(dir, tmp); err != nil {
		return err
	}
	return wrapLink(tmp, linkFd(fd, dir, tmp))
}

// noEmptyPathLink is set once linkat with AT_EMPTY_PATH was refused (it
// needs CAP_DAC_READ_SEARCH): links are then made through /proc/self/fd.
var noEmptyPathLink atomic.Bool

// linkFd links the file fd is open on as name in dir: linkat with
// AT_EMPTY_PATH (one lookup fewer than the path walk of /proc/self/fd/N)
// when the process may, else through /proc/self/fd (procOK).
func linkFd(fd, dir int, name string) error {
	if !noEmptyPathLink.Load() {
		err := unix.Linkat(fd, "", dir, name, unix.AT_EMPTY_PATH)
		if err != unix.EPERM && err != unix.ENOENT && err != unix.EACCES {
			return err
		}
		noEmptyPathLink.Store(true)
	}
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dir, name, unix.AT_SYMLINK_FOLLOW)
}

func wrapLink(tmp string, err error) error {
	if err != nil {
		return errors.New("link temp file " + tmp + ": " + err.Error())
	}
	return nil
}

// writeAll writes b to fd, all of it.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// removeStale removes what is at tmp in dir, if anything: a stale temp
// file, or anything planted there (a hard link, a symlink: unlinked, never
// written through). The caller holds the directory's writers' lock.
func removeStale(dir int, tmp string) error {
	if err := unix.Unlinkat(dir, tmp, 0); err != nil && err != unix.ENOENT {
		return errors.New("remove stale temp file " + tmp + ": " + err.Error())
	}
	return nil
}

// fillAt is writeAt without the fsync and the rename: it returns the
// filled temp file, still open, and its stat.
func fillAt(dir int, tmp string, content []byte, uid, gid int, mode uint32) (int, unix.Stat_t, error) {
	var sys unix.Stat_t
	if err := removeStale(dir, tmp); err != nil {
		return -1, sys, err
	}
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, sys, errors.New("create temp file " + tmp + ": " + err.Error())
	}
	err = writeAll(fd, content)
	if err == nil && (uid != -1 || gid != -1) {
		err = unix.Fchown(fd, uid, gid)
	}
	if err == nil {
		err = unix.Fchmod(fd, mode)
	}
	if err == nil {
		err = unix.Fstat(fd, &sys)
	}
	if err == nil && writeHook != nil {
		err = writeHook(tmp)
	}
	if err != nil {
		_ = unix.Close(fd)
		_ = unix.Unlinkat(dir, tmp, 0)
		return -1, sys, err
	}
	return fd, sys, nil
}

// tempName is the name of the temp file a write of base fills: hidden,
// derived from base (so the next write of base finds a stale one) and never
// longer than a name may be.
func tempName(base string) string {
	if t := "." + base + ".ccm-tmp"; len(t) <= 255 {
		return t
	}
	sum := sha256.Sum256([]byte(base))
	return ".ccm-tmp-" + hex.EncodeToString(sum[:16])
}

// writeHook, when set (tests), runs after the temp file is filled and
// before it is renamed into place; an error it returns fails the write.
var writeHook func(tmp string) error

// writeAt fills tmp in dir and renames it over base. A stale tmp (an
// interrupted write's, or anything planted there: a hard link, a symlink)
// is unlinked first, and the new one is created with O_EXCL|O_NOFOLLOW, so
// nothing already at that name is ever written through.
func writeAt(dir int, tmp, base string, src io.Reader, content []byte, uid, gid int, mode uint32) error {
	if err := removeStale(dir, tmp); err != nil {
		return err
	}
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return errors.New("create temp file " + tmp + ": " + err.Error())
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = fillTemp(f, src, content, uid, gid, mode)
	if err == nil && writeHook != nil {
		err = writeHook(tmp)
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

func fillTemp(f *os.File, src io.Reader, content []byte, uid, gid int, mode uint32) error {
	var err error
	if src != nil {
		_, err = io.Copy(f, src)
	} else {
		_, err = f.Write(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil && (uid != -1 || gid != -1) {
		err = unix.Fchown(int(f.Fd()), uid, gid)
	}
	if err == nil {
		err = unix.Fchmod(int(f.Fd()), mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockDir takes the writers' flock on a directory. Only ccm takes it, for
// microseconds, so it is tried for a few seconds: anyone else holding it
// (it needs only read access to the directory) cannot hang ccm.
func lockDir(fd int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("another process holds the directory's lock (flock) for 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// fsMkdir creates the directory (and, with Parents, each missing parent,
// each checked against the grant), then chowns and chmods it exactly, so
// the umask does not matter. An existing directory only gets the chown and
// chmod.
func fsMkdir(_ context.Context, st *State, req abi.FSMkdirRequest) (any, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	l, cerr := locateChecked(st, abi.CallFSMkdir, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	if cerr := setidRule(st, abi.CallFSMkdir, req.Path, req.Mode); cerr != nil {
		return nil, cerr
	}
	uid, cerr := st.Names.uidOf(req.Owner)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := st.Names.gidOf(req.Group)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := mkParents(st, req, l); cerr != nil {
		return nil, cerr
	}
	if err := unix.Mkdirat(l.dir, l.base, req.Mode&0o777); err != nil && err != unix.EEXIST {
		return nil, osError("mkdir", req.Path, err)
	}
	fd, err := unix.Openat(l.dir, l.base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOTDIR || err == unix.ELOOP {
		typ := "file"
		if sys, err := lstatAt(l); err == nil {
			typ = fileType(sys.Mode)
		}
		return nil, &abi.CallError{Code: abi.CodeExists, Message: req.Path + " exists as a " + typ}
	}
	if err != nil {
		return nil, osError("mkdir", req.Path, err)
	}
	defer unix.Close(fd)
	if uid != -1 || gid != -1 {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return nil, osError("chown", req.Path, err)
		}
	}
	if err := unix.Fchmod(fd, req.Mode); err != nil {
		return nil, osError("chmod", req.Path, err)
	}
	return abi.Empty{}, nil
}

// mkParents creates the missing parents of l, outermost first, each one
// checked against fs_write: a grant of /a/b/c does not let mkdir create
// /a/b. Each is created and entered through the descriptor of the one
// before, so l.dir ends as the target's parent.
func mkParents(st *State, req abi.FSMkdirRequest, l *location) *abi.CallError {
	if l.missing == nil {
		return nil
	}
	if !req.Parents {
		return &abi.CallError{Code: abi.CodeNotFound, Message: "parent directory " + l.parentPath() + " of " + req.Path + " does not exist; set parents to create it"}
	}
	for len(l.missing) > 0 {
		name := l.missing[0]
		d := joinPath(l.dirPath, name)
		if cerr := allowed(st, access{call: abi.CallFSMkdir, path: d, target: d}); cerr != nil {
			return cerr
		}
		if err := unix.Mkdirat(l.dir, name, 0o755); err != nil && err != unix.EEXIST {
			return osError("mkdir", d, err)
		}
		fd, err := unix.Openat(l.dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return osError("mkdir", d, err)
		}
		_ = unix.Close(l.dir)
		l.dir, l.dirPath, l.missing = fd, d, l.missing[1:]
	}
	l.missing = nil
	return nil
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// fsRemove unlinks a file or symlink (never its target) or removes a
// directory; a non-empty one only with Recursive, which does not follow
// symlinks either.
func fsRemove(_ context.Context, st *State, req abi.FSRemoveRequest) (any, *abi.CallError) {
	l, cerr := locateChecked(st, abi.CallFSRemove, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	if l.missing != nil {
		return nil, osError("remove", req.Path, unix.ENOENT)
	}
	sys, err := lstatAt(l)
	if err != nil {
		return nil, osError("remove", req.Path, err)
	}
	switch {
	case sys.Mode&unix.S_IFMT != unix.S_IFDIR:
		err = unix.Unlinkat(l.dir, l.base, 0)
	case req.Recursive:
		err = removeAllAt(l.dir, l.base, 0)
	default:
		err = unix.Unlinkat(l.dir, l.base, unix.AT_REMOVEDIR)
	}
	if err == unix.ENOTEMPTY || err == unix.EEXIST {
		return nil, &abi.CallError{Code: abi.CodeExists, Message: "directory " + req.Path + " is not empty; set recursive to remove it with its contents"}
	}
	if err != nil {
		return nil, osError("remove", req.Path, err)
	}
	return abi.Empty{}, nil
}

// removeAllAt removes name in dir and, if it is a directory, everything in
// it, through descriptors: nothing is followed, and a directory swapped for
// a symlink meanwhile is unlinked as the symlink it has become.
func removeAllAt(dir int, name string, depth int) error {
	if depth > 4096 {
		return errors.New("directory tree deeper than 4096 levels")
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOTDIR || err == unix.ELOOP {
		return unix.Unlinkat(dir, name, 0)
	}
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			err := unix.Unlinkat(fd, n, 0)
			if err == unix.EISDIR {
				err = removeAllAt(fd, n, depth+1)
			}
			if err != nil && err != unix.ENOENT {
				return err
			}
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	err = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
	if err == unix.ENOENT {
		return nil
	}
	return err
}

// openNoFollow opens what is at l itself (never a symlink's target) as an
// O_PATH descriptor and fstats it: chown and chmod then act on that inode,
// whatever happens to the name meanwhile.
func openNoFollow(l *location, op, path string) (int, unix.Stat_t, *abi.CallError) {
	var sys unix.Stat_t
	if l.missing != nil {
		return -1, sys, osError(op, path, unix.ENOENT)
	}
	fd, err := unix.Openat(l.dir, l.base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, sys, osError(op, path, err)
	}
	if err := unix.Fstat(fd, &sys); err != nil {
		_ = unix.Close(fd)
		return -1, sys, osError(op, path, err)
	}
	return fd, sys, nil
}

// fsChown changes ownership with lchown semantics: a symlink itself, never
// its target.
func fsChown(_ context.Context, st *State, req abi.FSChownRequest) (any, *abi.CallError) {
	l, cerr := locateChecked(st, abi.CallFSChown, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	uid, cerr := st.Names.uidOf(req.Owner)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := st.Names.gidOf(req.Group)
	if cerr != nil {
		return nil, cerr
	}
	fd, sys, cerr := openNoFollow(l, "chown", req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer unix.Close(fd)
	if cerr := hardLinkRule(st, &sys, "chown", req.Path); cerr != nil {
		return nil, cerr
	}
	if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, osError("chown", req.Path, err)
	}
	return abi.Empty{}, nil
}

// fsChmod changes permission bits. Linux cannot chmod a symlink itself and
// chmod would follow it, so a symlink is refused.
func fsChmod(_ context.Context, st *State, req abi.FSChmodRequest) (any, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	l, cerr := locateChecked(st, abi.CallFSChmod, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer l.close()
	if cerr := setidRule(st, abi.CallFSChmod, req.Path, req.Mode); cerr != nil {
		return nil, cerr
	}
	fd, sys, cerr := openNoFollow(l, "chmod", req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer unix.Close(fd)
	if sys.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil, invalid("chmod %s: it is a symlink, and chmod would change its target", req.Path)
	}
	if cerr := hardLinkRule(st, &sys, "chmod", req.Path); cerr != nil {
		return nil, cerr
	}
	if err := fchmodPath(fd, req.Mode); err != nil {
		return nil, osError("chmod", req.Path, err)
	}
	return abi.Empty{}, nil
}

// fchmodPath chmods the inode an O_PATH descriptor holds (not a symlink)
// through /proc/self/fd, whose magic link leads to exactly that inode
// (fchmod refuses an O_PATH descriptor; fchmodat2 with AT_EMPTY_PATH needs
// Linux 6.6).
func fchmodPath(fd int, mode uint32) error {
	return unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
}
