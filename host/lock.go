package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/ccm-dev/ccm/internal/privatedir"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// lockName is what PluginInfo.Lock may be: it becomes a file name.
var lockName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// lockPoll bounds the pause between two tries of a held lock.
const lockPoll = 100 * time.Millisecond

// runLocks is where a Host's run lock files live. The lock itself is an
// exclusive flock on DIR/NAME.lock, taken around each mutating ccm_apply of a
// plugin that declares PluginInfo.Lock: flock excludes across processes and
// across separate open files of one process alike, so two calls of one
// ccm wait for each other the same way.
type runLocks struct {
	mu  sync.Mutex
	dir string // "" until first use: defaultLockDir
}

// SetLockDir puts the run lock files (PluginInfo.Lock) in dir instead of
// the default: /run/lock/ccm as root, else $XDG_RUNTIME_DIR/ccm, else
// $TMPDIR/ccm-UID. Call it before the first apply.
func (h *Host) SetLockDir(dir string) {
	h.locks.mu.Lock()
	defer h.locks.mu.Unlock()
	h.locks.dir = dir
}

// LockDir is the directory of the run lock files.
func (h *Host) LockDir() string {
	h.locks.mu.Lock()
	defer h.locks.mu.Unlock()
	if h.locks.dir == "" {
		h.locks.dir = defaultLockDir()
	}
	return h.locks.dir
}

func defaultLockDir() string {
	if d := testLockDir(); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/run/lock/ccm"
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		return filepath.Join(x, "ccm")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("ccm-%d", os.Getuid()))
}

// lockIfNeeded takes the run lock of info for a mutating ccm_apply (apply
// mode; noop, health-check and status calls never lock) and returns its
// release; a plugin without a lock gets a no-op release.
func (h *Host) lockIfNeeded(ctx context.Context, info abi.PluginInfo, caller trust.Caller) (func(), error) {
	if info.Lock == "" || caller.Mode != trust.ModeApply {
		return func() {}, nil
	}
	return h.acquireLock(ctx, info.Type, info.Lock, h.limits.CallTimeout, caller.Log)
}

// acquireLock takes the named lock, waiting at most wait for another
// holder; notify (if not nil) hears once that the call is waiting.
func (h *Host) acquireLock(ctx context.Context, typ, name string, wait time.Duration, notify func(level, message string)) (func(), error) {
	if !lockName.MatchString(name) {
		return nil, fmt.Errorf("plugin for type %q declares lock %q: a lock name is 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit; fix the plugin", typ, name)
	}
	dir := h.LockDir()
	path := filepath.Join(dir, name+".lock")
	stop := time.Now().Add(wait)
	told := false
	tell := func() {
		if !told && notify != nil {
			notify("warn", fmt.Sprintf("waiting for the %s lock held by another ccm run (%s), at most %s", name, path, wait))
		}
		told = true
	}
	timeout := func() error {
		return fmt.Errorf("timed out after %s waiting for the %s lock %s held by another ccm run; rerun when that run has finished", wait, name, path)
	}

	f, err := openLockFile(dir, path)
	if err != nil {
		return nil, err
	}
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, lockPoll) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		tell()
		if time.Now().Add(pause).After(stop) {
			f.Close()
			return nil, timeout()
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the %s lock %s: %w", name, path, context.Cause(ctx))
		}
	}
	// Closing the descriptor releases the flock.
	return func() { f.Close() }, nil
}

// openLockFile opens (creating) the lock file in dir, which it creates too.
// A directory under a shared /tmp must be ours and not a symlink, or
// another user could hold our lock or point it elsewhere.
func openLockFile(dir, path string) (*os.File, error) {
	if err := privateDir("lock", dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	return f, nil
}

// privateDir makes dir, or checks that an existing one is private
// (internal/privatedir): under a shared /tmp, another user could otherwise
// have made it first to hold our lock, or to plant the machine code of a
// compilation cache. what names the directory in the error.
func privateDir(what, dir string) error {
	perm := os.FileMode(0o700)
	if os.Geteuid() == 0 {
		perm = 0o755
	}
	if err := privatedir.Ensure(dir, perm); err != nil {
		return fmt.Errorf("%s directory %s is not a directory owned by uid %d (or root) and writable only by its owner: %w; remove it or fix its owner and mode", what, dir, os.Geteuid(), err)
	}
	return nil
}
