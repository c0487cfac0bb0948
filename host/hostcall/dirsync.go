package hostcall

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxPendingDirs bounds the directories one call keeps open for syncing;
// past it, a write syncs its directory at once.
const maxPendingDirs = 64

// DirSyncs are the directories whose fsync a plugin call put off. A write
// renames its file into place at once (a later stat in the same call sees
// it), but the rename is made durable when the call ends, once per
// directory, before its results reach the engine: a batch of 256 files in
// one directory then costs one directory fsync instead of 256 (each about as
// slow as the file's own). The file's data is still synced before the
// rename, so a crash never leaves a half-written file in place.
type DirSyncs struct {
	dirs map[string]*os.File
}

// add puts off the fsync of dir (its resolved path), open as f; it takes
// f over. A nil DirSyncs, or a full one, syncs now.
func (d *DirSyncs) add(dir string, f *os.File) {
	if _, ok := d.pending(dir); ok {
		_ = f.Close()
		return
	}
	if d == nil || len(d.dirs) >= maxPendingDirs {
		_ = f.Sync()
		_ = f.Close()
		return
	}
	if d.dirs == nil {
		d.dirs = make(map[string]*os.File)
	}
	d.dirs[dir] = f
}

func (d *DirSyncs) pending(dir string) (*os.File, bool) {
	if d == nil {
		return nil, false
	}
	f, ok := d.dirs[dir]
	return f, ok
}

// SyncAll syncs and closes every pending directory.
func (d *DirSyncs) SyncAll() {
	if d == nil {
		return
	}
	for dir, f := range d.dirs {
		_ = f.Sync()
		_ = f.Close()
		delete(d.dirs, dir)
	}
}

// addAt puts off the fsync of dir (its resolved path), which fd is open
// on (O_RDONLY); fd stays the caller's. The directory is opened again for
// DirSyncs the first time; a nil or full DirSyncs syncs fd now.
func (d *DirSyncs) addAt(dir string, fd int) {
	if _, ok := d.pending(dir); ok {
		return
	}
	if d == nil || len(d.dirs) >= maxPendingDirs {
		_ = unix.Fsync(fd)
		return
	}
	own, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Fsync(fd)
		return
	}
	d.add(dir, os.NewFile(uintptr(own), dir))
}
