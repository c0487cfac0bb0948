package hostcall

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// checkClean refuses a path that is relative or not in canonical form: no
// ".", "..", "//" or trailing "/". Grants match canonical absolute paths
// only, and a ".." is never resolved on a plugin's behalf.
func checkClean(p string) *abi.CallError {
	if p == "" {
		return invalid("empty path")
	}
	if !filepath.IsAbs(p) {
		return invalid("path %q is not absolute", p)
	}
	if filepath.Clean(p) != p {
		return invalid("path %q is not canonical (no '.', '..', '//' or trailing '/')", p)
	}
	return nil
}

// maxSymlinks bounds the symlinks one resolution follows, as the kernel's 40.
const maxSymlinks = 40

// noOpenat2 is set once openat2 answered ENOSYS (kernels before 5.6, or a
// seccomp filter): every walk then goes component by component.
var noOpenat2 atomic.Bool

// location is where a filesystem host call acts: the name base in the
// directory dir, an O_PATH descriptor obtained by a walk that never let the
// kernel follow a symlink, whose path is dirPath. Every check is made on
// full(), the path of what the call then touches through dir, and every
// operation after the check goes through dir with *at calls and O_NOFOLLOW,
// so renaming or swapping a component for a symlink between the check and
// the operation changes nothing: the descriptor stays where it was checked.
//
// missing are the components between dirPath and base that did not exist
// (a mkdir with parents creates them; for every other call the target does
// not exist). For "/", dir is "/" and base is ".".
type location struct {
	dir     int
	dirPath string
	missing []string
	base    string
}

// full is the resolved path of the target: what grants match.
func (l *location) full() string {
	if l.base == "." {
		return l.dirPath
	}
	parts := append([]string{l.dirPath}, l.missing...)
	return filepath.Join(append(parts, l.base)...)
}

// parentPath is the resolved path of the target's parent.
func (l *location) parentPath() string {
	return filepath.Join(append([]string{l.dirPath}, l.missing...)...)
}

func (l *location) close() {
	if l != nil && l.dir >= 0 {
		_ = unix.Close(l.dir)
		l.dir = -1
	}
}

// locate checks p and walks to its parent directory (see walkDir). The
// final component is kept as is, never followed.
func locate(p string) (*location, *abi.CallError) {
	if cerr := checkClean(p); cerr != nil {
		return nil, cerr
	}
	return locateClean(p)
}

func locateClean(p string) (*location, *abi.CallError) {
	if p == "/" {
		fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, osError("open", "/", err)
		}
		return &location{dir: fd, dirPath: "/", base: "."}, nil
	}
	fd, dirPath, missing, err := walkDir(filepath.Dir(p))
	if err != nil {
		return nil, osError("resolve", p, err)
	}
	return &location{dir: fd, dirPath: dirPath, missing: missing, base: filepath.Base(p)}, nil
}

// errDangling is a symlink on the way whose target does not exist: where a
// write through it would land is the link's business, not a guess of ours.
var errDangling = errors.New("dangling symlink in the path")

// walkDir opens the directory dir (absolute, clean) as an O_PATH descriptor
// and returns it with its path with every symlink resolved. A missing tail
// is returned as missing (the descriptor is then the deepest existing
// directory). The kernel never follows a symlink on the way: openat2 with
// RESOLVE_NO_SYMLINKS opens a path without any in one call; otherwise the
// walk goes one component at a time (openat with O_NOFOLLOW from the
// previous component's descriptor), reading each symlink and walking its
// target itself, so the path returned is always where the descriptor is,
// and no step can be redirected by a rename or a swapped symlink.
func walkDir(dir string) (fd int, resolved string, missing []string, err error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			return fd, dir, nil, nil
		}
		if err == unix.ENOSYS || err == unix.EPERM {
			noOpenat2.Store(true)
		}
		// ELOOP (a symlink), ENOENT (a missing tail), ENOTDIR and the
		// rest: the walk below finds the answer and the right error.
	}
	return walkComponents(dir)
}

type step struct {
	name string
	link bool // from a symlink's target
}

func splitSteps(p string, link bool, rest []step) []step {
	var out []step
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, step{c, link})
		}
	}
	return append(out, rest...)
}

// walkComponents is walkDir one component at a time.
func walkComponents(dir string) (int, string, []string, error) {
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", nil, err
	}
	// stack[i] is the descriptor of "/" + names[:i]; ".." pops it, so a
	// ".." in a symlink's target goes back the way the walk came.
	stack, names := []int{root}, []string(nil)
	closeAll := func(keep int) {
		for _, f := range stack {
			if f != keep {
				_ = unix.Close(f)
			}
		}
	}
	todo := splitSteps(dir, false, nil)
	links := 0
	for len(todo) > 0 {
		s := todo[0]
		todo = todo[1:]
		if s.name == ".." {
			if len(names) > 0 {
				_ = unix.Close(stack[len(stack)-1])
				stack, names = stack[:len(stack)-1], names[:len(names)-1]
			}
			continue
		}
		cur := stack[len(stack)-1]
		nfd, err := unix.Openat(cur, s.name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			stack, names = append(stack, nfd), append(names, s.name)
			continue
		}
		var target string
		if err == unix.ENOTDIR || err == unix.ELOOP {
			target, err = readlinkat(cur, s.name)
			if err == unix.EINVAL {
				// Not a symlink but a file: what would be under it does
				// not exist, as for a missing directory.
				err = unix.ENOENT
			}
		}
		if err == unix.ENOENT {
			if s.link {
				closeAll(-1)
				return -1, "", nil, errDangling
			}
			missing := []string{s.name}
			for _, r := range todo {
				if r.name == ".." || r.link {
					// Only a symlink's target may hold ".." (the path is
					// canonical), and a dangling symlink is refused above.
					closeAll(-1)
					return -1, "", nil, errDangling
				}
				missing = append(missing, r.name)
			}
			closeAll(cur)
			return cur, "/" + strings.Join(names, "/"), missing, nil
		}
		if err != nil {
			closeAll(-1)
			return -1, "", nil, err
		}
		if links++; links > maxSymlinks {
			closeAll(-1)
			return -1, "", nil, unix.ELOOP
		}
		if strings.HasPrefix(target, "/") {
			closeAll(root)
			stack, names = []int{root}, nil
		}
		todo = splitSteps(target, true, todo)
	}
	top := stack[len(stack)-1]
	closeAll(top)
	return top, "/" + strings.Join(names, "/"), nil, nil
}

// readlinkat reads the symlink name in dir.
func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= 1<<16 {
			return "", unix.ENAMETOOLONG
		}
	}
}

// lstatAt is fstatat without following a final symlink; "." is the
// directory itself.
func lstatAt(l *location) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(l.dir, l.base, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// followFinal follows the symlink at l, if any, to what it finally points
// at, calling check on every location reached (the link's target is matched
// against the grant, not only the link). It returns the final location
// (l itself when it is no symlink, else a new one; l is closed) and whether
// it exists.
func followFinal(l *location, check func(*location) *abi.CallError) (*location, bool, *abi.CallError) {
	for links := 0; ; links++ {
		if l.missing != nil {
			return l, false, nil
		}
		st, err := lstatAt(l)
		if err == unix.ENOENT {
			return l, false, nil
		}
		if err != nil {
			return l, false, osError("stat", l.full(), err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return l, true, nil
		}
		if links >= maxSymlinks {
			return l, false, osError("resolve", l.full(), unix.ELOOP)
		}
		target, err := readlinkat(l.dir, l.base)
		if err != nil {
			return l, false, osError("readlink", l.full(), err)
		}
		if !strings.HasPrefix(target, "/") {
			// dirPath has no symlink, so a ".." in target is lexical.
			target = filepath.Join(l.dirPath, target)
		}
		next, cerr := locateClean(filepath.Clean(target))
		l.close()
		if cerr != nil {
			return nil, false, cerr
		}
		l = next
		if cerr := check(l); cerr != nil {
			return l, false, cerr
		}
	}
}

// fileType names the type in st.Mode as ccm_fs_stat does.
func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	}
	return "other"
}
