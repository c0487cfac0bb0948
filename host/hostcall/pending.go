package hostcall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
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
// an immediate write; only its file's fsync and then the step that puts
// it in place are put off, both on the descriptors opened at call time
// (the file's, and its directory's), never by resolving a path again. The
// target keeps its old content (or stays absent) until the fsynced file
// is put in place, so a crash at any point leaves the target old or
// complete.
//
// The file is filled unnamed where the filesystem allows it (O_TMPFILE,
// see fillAnon): until its fsync is done no name in the directory holds
// it, and a crash leaves nothing behind (the inode is freed). It is then
// linked to the target's name, which fails rather than replace anything
// there; a target that exists is replaced by linking the file under its
// temp name and renaming that over it, under the directory's writers'
// lock. Elsewhere (no O_TMPFILE, or no /proc to link it through) the file
// is filled under its temp name, under the lock, and renamed over the
// target once synced, as an immediate write.
//
// Ordering within the call (a target is named by its directory's device
// and inode and its name, so every path to it finds it): a stat of a
// pending target answers from the filled file, which is what the last
// step will put in place; a write of a pending target completes it first;
// every other filesystem call, exec and net fetch completes all pending
// writes before it runs. When the plugin call returns, Settle completes
// all of them and reports the first failure, which fails the whole call:
// no result of the call reaches the engine until every write it made is
// durable, and a write that could not be completed fails the call naming
// its path (the host does not see which resource of a batch made it).
//
// A Pending is used by one goroutine (the plugin call's); only the fsyncs
// run elsewhere.
type Pending struct {
	writes map[string]*pendingWrite // by pendingKey
	order  []*pendingWrite          // oldest first; completed ones are skipped
	err    error                    // the first completion that failed
	// named, set by tests, fills every write under its temp name as where
	// O_TMPFILE is not available.
	named bool
}

type pendingWrite struct {
	key     string // its key in Pending.writes (pendingKey)
	path    string // as the plugin named it, for errors
	dir     int    // the target's directory (O_PATH, or O_RDONLY for a named write)
	dirPath string
	tmp     string      // the temp file's name in dir
	base    string      // the target's name in dir
	anon    bool        // fd is an unnamed file (O_TMPFILE) no name holds yet
	exists  bool        // something was at base at call time
	syncDir bool        // dir is to be handed to the call's DirSyncs when done
	fd      int         // the filled file
	sys     unix.Stat_t // of the filled file (owner and mode set)
	sum     string      // sha256 of the content
	done    chan struct{}
	syncErr error
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
// returns the directory's stat too ("" when there is no key).
func pendingKey(l *location) (string, unix.Stat_t) {
	var sys unix.Stat_t
	if l.missing != nil || l.base == "." {
		return "", sys
	}
	if err := unix.Fstat(l.dir, &sys); err != nil {
		return "", sys
	}
	return strconv.FormatUint(sys.Dev, 10) + ":" + strconv.FormatUint(sys.Ino, 10) + "/" + l.base, sys
}

// lookup is the pending write of the target at l, if any.
func (p *Pending) lookup(l *location) *pendingWrite {
	if p == nil || len(p.writes) == 0 {
		return nil
	}
	key, _ := pendingKey(l)
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
	return p.err
}

// finish waits for w's fsync, then puts the file in place (place or
// renameTemp). A failure leaves the target as it was, removes the temp
// name if this write made it, and is kept for Settle.
func (p *Pending) finish(st *State, w *pendingWrite) {
	<-w.done
	err := w.syncErr
	if err == nil {
		err = completeHook(w.base)
	}
	if w.anon {
		if err == nil {
			err = w.place()
		}
		_ = unix.Close(w.fd) // an unnamed file that failed is freed here
	} else {
		if cerr := unix.Close(w.fd); err == nil {
			err = cerr
		}
		if err == nil {
			err = w.renameTemp()
		}
		if err != nil && w.tmp != "" {
			_ = unix.Unlinkat(w.dir, w.tmp, 0)
		}
	}
	if err != nil {
		_ = unix.Close(w.dir)
		if p.err == nil {
			p.err = fmt.Errorf("write %s: completing it after the plugin's call returned: %w", w.path, err)
		}
		return
	}
	if w.syncDir {
		st.Dirs.add(w.dirPath, os.NewFile(uintptr(w.dir), w.dirPath)) // durability of the new name, at the end of the call
	} else {
		_ = unix.Close(w.dir) // st.Dirs already holds the directory
	}
}

// renameTemp renames the named temp file over the target, under the
// directory's writers' lock, if the temp name still holds the file this
// call filled (another ccm process writing the same target meanwhile
// replaces it, and then this write fails rather than renaming the other's
// half-written file).
func (w *pendingWrite) renameTemp() error {
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
	return unix.Renameat(w.dir, w.tmp, w.dir, w.base)
}

// place gives the unnamed, synced file its name. A target that did not
// exist at call time gets it by one link, which fails if anything took the
// name meanwhile (it never replaces). Otherwise, under the directory's
// writers' lock, the file is linked under its temp name (a stale one,
// left by an interrupted write, is removed first; nothing at that name is
// written through) and renamed over the target, replacing whatever is
// there (a symlink or hard link is replaced, never followed). w.dir is
// left open on the directory for the fsync of the new name.
func (w *pendingWrite) place() error {
	proc := "/proc/self/fd/" + strconv.Itoa(w.fd)
	if !w.exists {
		err := unix.Linkat(unix.AT_FDCWD, proc, w.dir, w.base, unix.AT_SYMLINK_FOLLOW)
		if err != unix.EEXIST {
			return err
		}
	}
	dfd, err := unix.Openat(w.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.Close(w.dir)
	w.dir = dfd // the O_PATH descriptor cannot be locked
	if err := lockDir(dfd); err != nil {
		return err
	}
	defer unix.Flock(dfd, unix.LOCK_UN)
	if err := removeStale(dfd, w.tmp); err != nil {
		return err
	}
	if err := unix.Linkat(unix.AT_FDCWD, proc, dfd, w.tmp, unix.AT_SYMLINK_FOLLOW); err != nil {
		return fmt.Errorf("link temp file %s: %w", w.tmp, err)
	}
	if err := unix.Renameat(dfd, w.tmp, dfd, w.base); err != nil {
		_ = unix.Unlinkat(dfd, w.tmp, 0)
		return err
	}
	return nil
}

// completeHook, when set (tests), runs before a pending write's file is
// put in place (with the target's name); an error it returns fails the
// write.
var completeHook = func(string) error { return nil }

// stat is what a stat of the target answers while w is pending: the filled
// file, which completing it puts in place as it is.
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
