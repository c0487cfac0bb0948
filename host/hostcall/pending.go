package hostcall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/ccm-dev/ccm/sdk/abi"

	"golang.org/x/sys/unix"
)

// syncWorkers bounds the file fsyncs in flight at once, over the whole
// process: on the project's disk 16 durable creates at a time take a
// quarter of the time of one at a time (docs/performance.md).
const syncWorkers = 16

// maxPendingWrites bounds the writes one plugin call keeps pending (two
// descriptors each); past it, every pending write is completed first.
const maxPendingWrites = 128

var syncSlots = make(chan struct{}, syncWorkers)

// Pending are the whole-content writes of one plugin call whose fsync runs
// in the background while the plugin goes on (fsWrite with State.Pending
// set). Each write is checked, located and filled at call time exactly as
// an immediate write; only its file's fsync and then its rename over the
// target are put off, both on the descriptors opened at call time (the
// temp file's, and its directory's), never by resolving a path again. The
// target keeps its old content (or stays absent) until the fsynced temp
// file is renamed over it, so a crash at any point leaves the target old
// or complete.
//
// The file is filled unnamed where the filesystem allows it (O_TMPFILE,
// fillAnon) and linked under its temp name once complete, before its
// fsync (which so makes its link count durable too); elsewhere it is
// filled under its temp name, under the directory's writers' lock, as an
// immediate write. Either way the temp name holds the file from its fsync
// to its rename.
//
// Ordering within the call (a target is named by its directory's device
// and inode and its name, so every path to it finds it): a stat of a
// pending target answers from the filled temp file, which is what the
// rename will put in place; a write of a pending target completes it
// first; every other filesystem call, exec and net fetch completes all
// pending writes before it runs. When the plugin call returns, Settle
// completes all of them and reports the first failure, which fails the
// whole call: no result of the call reaches the engine until every write
// it made is durable, and a write that could not be completed fails the
// call naming its path (the host does not see which resource of a batch
// made it).
//
// A Pending is used by one goroutine (the plugin call's); only the fsyncs
// run elsewhere.
type Pending struct {
	writes map[string]*pendingWrite // by pendingKey
	order  []*pendingWrite          // oldest first; completed ones are skipped
	err    error                    // the first completion that failed
	// dirs are the directories the call's pending writes went to, opened
	// once each (O_RDONLY: for the lock), by their device and inode as
	// the write's fresh walk found them: a descriptor is reused only for
	// the very directory the walk resolved. Closed by Settle.
	dirs map[string]int
	// named, set by tests, fills every write under its temp name, as
	// where O_TMPFILE is not available.
	named bool
}

// maxPendingDirDescs bounds Pending.dirs; past it a write opens its
// directory for itself.
const maxPendingDirDescs = 64

type pendingWrite struct {
	key     string // its key in Pending.writes (pendingKey)
	path    string // as the plugin named it, for errors
	dir     int    // the target's directory (O_RDONLY), for the lock and the rename
	ownDir  bool   // dir is this write's to close (not in Pending.dirs)
	dirPath string
	tmp     string      // the temp file's name in dir
	base    string      // the target's name in dir
	anon    bool        // filled unnamed, then linked under tmp
	fd      int         // the filled temp file
	sys     unix.Stat_t // of the filled temp file (owner and mode set)
	sum     string      // sha256 of the content
	done    chan struct{}
	syncErr error
}

// dirFor is a descriptor (O_RDONLY) of the directory l.dir is, whose
// identity (device:inode) the caller read from l.dir; own is whether the
// caller must close it.
func (p *Pending) dirFor(l *location, id string) (fd int, own bool, err error) {
	if fd, ok := p.dirs[id]; ok && id != "" {
		return fd, false, nil
	}
	fd, err = unix.Openat(l.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || id == "" || len(p.dirs) >= maxPendingDirDescs {
		return fd, true, err
	}
	if p.dirs == nil {
		p.dirs = make(map[string]int)
	}
	p.dirs[id] = fd
	return fd, false, nil
}

// add starts the fsync of a filled write in the background; p takes w over.
// A write without a key (its directory's identity could not be read) is
// completed at once.
func (p *Pending) add(st *State, key string, w *pendingWrite) {
	w.done = make(chan struct{})
	if key == "" {
		w.syncErr = unix.Fsync(w.fd)
		close(w.done)
		p.finish(st, w)
		return
	}
	for len(p.writes) >= maxPendingWrites {
		p.completeOldest(st)
	}
	if p.writes == nil {
		p.writes = make(map[string]*pendingWrite)
	}
	p.writes[key] = w
	w.key = key
	p.order = append(p.order, w)
	go func() {
		syncSlots <- struct{}{}
		w.syncErr = unix.Fsync(w.fd)
		<-syncSlots
		close(w.done)
	}()
}

// pendingKey names the target at l by its directory's device and inode
// and its name there, so every path that resolves to it (through symlinks
// or another mount of the same directory) finds the pending write. It
// returns the directory's identity (device:inode) and stat too; the key
// is "" when there is none.
func pendingKey(l *location) (key, id string, dir unix.Stat_t) {
	if l.missing != nil || l.base == "." {
		return "", "", dir
	}
	if err := unix.Fstat(l.dir, &dir); err != nil {
		return "", "", dir
	}
	id = strconv.FormatUint(dir.Dev, 10) + ":" + strconv.FormatUint(dir.Ino, 10)
	return id + "/" + l.base, id, dir
}

// lookup is the pending write of the target at l, if any.
func (p *Pending) lookup(l *location) *pendingWrite {
	if p == nil || len(p.writes) == 0 {
		return nil
	}
	key, _, _ := pendingKey(l)
	if key == "" {
		return nil
	}
	return p.writes[key]
}

// complete completes the pending write of the target at l, if there is one.
func (p *Pending) complete(st *State, l *location) {
	if w := p.lookup(l); w != nil {
		p.completeKey(st, w.key)
	}
}

// completeKey completes the pending write of key, if there is one.
func (p *Pending) completeKey(st *State, key string) {
	if p == nil || key == "" {
		return
	}
	if w := p.writes[key]; w != nil {
		delete(p.writes, key)
		p.finish(st, w)
	}
}

// completeOldest completes the oldest pending write: the others' fsyncs
// stay in flight.
func (p *Pending) completeOldest(st *State) {
	for len(p.order) > 0 {
		w := p.order[0]
		p.order[0] = nil
		p.order = p.order[1:]
		if p.writes[w.key] == w {
			delete(p.writes, w.key)
			p.finish(st, w)
			return
		}
	}
}

// completeAll completes every pending write, oldest first (each waits for
// its fsync, then is put in place).
func (p *Pending) completeAll(st *State) {
	if p == nil {
		return
	}
	for len(p.writes) > 0 {
		p.completeOldest(st)
	}
	p.order = nil
}

// Settle completes every pending write and returns the first failure of
// any completion in this call, naming its path. The directories' fsyncs
// stay with st.Dirs (SyncAll, after this).
func (p *Pending) Settle(st *State) error {
	if p == nil {
		return nil
	}
	p.completeAll(st)
	for id, fd := range p.dirs {
		_ = unix.Close(fd)
		delete(p.dirs, id)
	}
	return p.err
}

// finish waits for w's fsync, then, under the directory's writers' lock,
// renames the temp file over the target if the temp name still holds the
// file this call filled (another ccm process writing the same target
// meanwhile replaces it, and then this write fails rather than renaming
// the other's file). A failure removes the temp file and is kept for
// Settle.
func (p *Pending) finish(st *State, w *pendingWrite) {
	<-w.done
	err := w.syncErr
	if cerr := unix.Close(w.fd); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = w.rename()
	}
	if err == nil {
		st.Dirs.addAt(w.dirPath, w.dir) // durability of the rename, at the end of the call
	} else {
		if w.tmp != "" {
			_ = unix.Unlinkat(w.dir, w.tmp, 0)
		}
		if p.err == nil {
			p.err = fmt.Errorf("write %s: completing it after the plugin's call returned: %w", w.path, err)
		}
	}
	if w.ownDir {
		_ = unix.Close(w.dir)
	}
}

// rename is finish's rename under the directory's writers' lock, after
// checking the temp name still holds w's file.
func (w *pendingWrite) rename() error {
	if err := lockDir(w.dir); err != nil {
		return err
	}
	defer unix.Flock(w.dir, unix.LOCK_UN)
	var now unix.Stat_t
	err := unix.Fstatat(w.dir, w.tmp, &now, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err != nil:
		return fmt.Errorf("temp file %s vanished before its rename (another writer?): %w", w.tmp, err)
	case now.Dev != w.sys.Dev || now.Ino != w.sys.Ino:
		err := fmt.Errorf("temp file %s was replaced before its rename (another writer of the same file)", w.tmp)
		w.tmp = "" // not ours to remove
		return err
	}
	if err := completeHook(w.tmp); err != nil {
		return err
	}
	return unix.Renameat(w.dir, w.tmp, w.dir, w.base)
}

// completeHook, when set (tests), runs before a pending write's rename;
// an error it returns fails the write.
var completeHook = func(string) error { return nil }

// stat is what a stat of the target answers while w is pending: the filled
// temp file, which the rename puts in place as it is.
func (w *pendingWrite) stat(checksum bool, names *NameCache) abi.FSStatResponse {
	resp := statOf(&w.sys, names)
	if checksum {
		resp.SHA256 = w.sum
	}
	return resp
}

// sha256Hex is the checksum a stat answers for content.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
