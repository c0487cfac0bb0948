package hostcall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

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
// set). Each write is checked, located and filled at call time, under the
// directory's writers' lock, exactly as an immediate write; only its file's
// fsync and then its rename over the target are put off, both on the
// descriptors opened at call time (the temp file's, and its directory's),
// never by resolving a path again. The target keeps its old content (or
// stays absent) until the fsynced temp file is renamed over it, so a crash
// at any point leaves the target old or complete.
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
}

type pendingWrite struct {
	key     string   // its key in Pending.writes (pendingKey)
	path    string   // as the plugin named it, for errors
	dir     *os.File // the target's directory (O_RDONLY), for the lock and the rename
	dirPath string
	tmp     string // the temp file's name in dir
	base    string // the target's name in dir
	file    *os.File
	sys     unix.Stat_t // of the filled temp file (owner and mode set)
	sum     string      // sha256 of the content
	done    chan struct{}
	syncErr error
}

// add starts the fsync of a filled write in the background; p takes w over.
// A directory whose identity cannot be read completes the write at once.
func (p *Pending) add(st *State, l *location, w *pendingWrite) {
	w.done = make(chan struct{})
	key, ok := pendingKey(l)
	if !ok {
		w.syncErr = w.file.Sync()
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
		w.syncErr = w.file.Sync()
		<-syncSlots
		close(w.done)
	}()
}

// pendingKey names the target at l by its directory's device and inode
// and its name there, so every path that resolves to it (through symlinks
// or another mount of the same directory) finds the pending write.
func pendingKey(l *location) (string, bool) {
	if l.missing != nil || l.base == "." {
		return "", false
	}
	var sys unix.Stat_t
	if err := unix.Fstat(l.dir, &sys); err != nil {
		return "", false
	}
	return fmt.Sprintf("%d:%d/%s", sys.Dev, sys.Ino, l.base), true
}

// lookup is the pending write of the target at l, if any.
func (p *Pending) lookup(l *location) *pendingWrite {
	if p == nil || len(p.writes) == 0 {
		return nil
	}
	key, ok := pendingKey(l)
	if !ok {
		return nil
	}
	return p.writes[key]
}

// complete completes the pending write of the target at l, if there is one.
func (p *Pending) complete(st *State, l *location) {
	if w := p.lookup(l); w != nil {
		delete(p.writes, w.key)
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
// its fsync, then is renamed into place).
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

// finish waits for w's fsync, then, under the directory's writers' lock,
// renames the temp file over the target if the temp name still holds the
// file this call filled (another ccm process writing the same target
// meanwhile replaces it, and then this write fails rather than renaming
// the other's half-written file). A failure removes the temp file and is
// kept for Settle.
func (p *Pending) finish(st *State, w *pendingWrite) {
	<-w.done
	err := w.syncErr
	if cerr := w.file.Close(); err == nil && cerr != nil {
		err = cerr
	}
	dfd := int(w.dir.Fd())
	if err == nil {
		err = lockDir(dfd)
		if err == nil {
			var now unix.Stat_t
			err = unix.Fstatat(dfd, w.tmp, &now, unix.AT_SYMLINK_NOFOLLOW)
			switch {
			case err != nil:
				err = fmt.Errorf("temp file %s vanished before its rename (another writer?): %w", w.tmp, err)
			case now.Dev != w.sys.Dev || now.Ino != w.sys.Ino:
				err = fmt.Errorf("temp file %s was replaced before its rename (another writer of the same file)", w.tmp)
				w.tmp = "" // not ours to remove
			default:
				if err = completeHook(w.tmp); err == nil {
					err = unix.Renameat(dfd, w.tmp, dfd, w.base)
				}
			}
			_ = unix.Flock(dfd, unix.LOCK_UN)
		}
	}
	if err != nil {
		if w.tmp != "" {
			_ = unix.Unlinkat(dfd, w.tmp, 0)
		}
		_ = w.dir.Close()
		if p.err == nil {
			p.err = fmt.Errorf("write %s: completing it after the plugin's call returned: %w", w.path, err)
		}
		return
	}
	st.Dirs.add(w.dirPath, w.dir) // durability of the rename, at the end of the call
}

// completeHook, when set (tests), runs before a pending write's rename; an
// error it returns fails the write.
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
