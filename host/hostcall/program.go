package hostcall

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// program is an executable resolved and opened once: the grant is matched
// on path, and the child runs the open file (/proc/self/fd/N), so nothing
// can swap the program between the check and the exec.
type program struct {
	// path is the fully resolved executable: PATH looked up, then every
	// symlink of every component followed.
	path string
	// fd is an O_PATH descriptor of path, opened with no symlink followed.
	fd *os.File
	// interp is the #! interpreter of a script, resolved and opened the
	// same way, and interpLine the line's interpreter and argument as
	// written; nil for a binary.
	interp     *program
	interpName string
	interpArg  string
}

// maxShebang is the kernel's limit on a #! line (BINPRM_BUF_SIZE).
const maxShebang = 256

// openProgram resolves name (a bare name through path, then every symlink)
// and opens it. A test redirect (test builds only) stands in by name. The
// #! line is read only after the grant check (openInterp), so nothing of
// an ungranted file is read.
func openProgram(name, path string) (*program, *abi.CallError) {
	abs := name
	if !strings.Contains(name, "/") {
		var cerr *abi.CallError
		if abs, cerr = lookPath(name, path); cerr != nil {
			return nil, cerr
		}
	}
	if testRedirected(abs) {
		return &program{path: abs}, nil
	}
	return openResolved(abs)
}

// openInterp reads the #! line of a granted program and, for a script,
// resolves and opens its interpreter (p.interp), which must be a binary.
func (p *program) openInterp() *abi.CallError {
	line, cerr := p.shebang()
	if cerr != nil || line == "" {
		return cerr
	}
	interp, arg, _ := strings.Cut(strings.TrimLeft(line, " \t"), " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	arg = strings.Trim(arg, " \t")
	if !filepath.IsAbs(interp) || filepath.Clean(interp) != interp {
		return invalid("%s starts with #!%s: the interpreter must be an absolute, clean path", p.path, line)
	}
	ip, cerr := openResolved(interp)
	if cerr != nil {
		return cerr
	}
	if nested, _ := ip.shebang(); nested != "" {
		ip.close()
		return invalid("%s: its interpreter %s is itself a #! script; name a binary interpreter", p.path, ip.path)
	}
	p.interp, p.interpName, p.interpArg = ip, interp, arg
	return nil
}

// openResolved resolves every symlink of abs and opens the result with
// O_PATH, refusing any symlink on the way (RESOLVE_NO_SYMLINKS): the file
// opened is the one at the resolved path the grant is matched on.
func openResolved(abs string) (*program, *abi.CallError) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, osError("resolve", abs, err)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, resolved, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ELOOP) {
		return nil, denied("%s changed while it was resolved (a symlink appeared on %s); refusing to run it", abs, resolved)
	}
	if err != nil {
		return nil, osError("open", resolved, err)
	}
	f := os.NewFile(uintptr(fd), resolved)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, osError("stat", resolved, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		f.Close()
		return nil, &abi.CallError{Code: abi.CodeDenied, Message: fmt.Sprintf("%s is not an executable regular file", resolved)}
	}
	return &program{path: resolved, fd: f}, nil
}

// shebang returns the #! line of the opened file (without "#!"), or "" for
// a binary. It reads through the descriptor, never the path.
func (p *program) shebang() (string, *abi.CallError) {
	if p.fd == nil {
		return "", nil
	}
	f, err := os.OpenFile(p.procPath(), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		// Execute-only (mode 0111): the kernel can still run a binary.
		return "", nil
	}
	defer f.Close()
	buf := make([]byte, maxShebang)
	n, _ := f.Read(buf)
	buf = buf[:n]
	if !bytes.HasPrefix(buf, []byte("#!")) {
		return "", nil
	}
	line, _, found := bytes.Cut(buf[2:], []byte("\n"))
	if !found && n == maxShebang {
		return "", invalid("%s: #! line longer than %d bytes", p.path, maxShebang)
	}
	if s := strings.TrimSpace(string(line)); s != "" {
		return s, nil
	}
	return "", invalid("%s: #! line names no interpreter", p.path)
}

func (p *program) procPath() string { return "/proc/self/fd/" + strconv.Itoa(int(p.fd.Fd())) }

// command is the path and argv to exec: a binary runs from its descriptor
// with argv unchanged; a script runs its interpreter from the interpreter's
// descriptor with the kernel's argv ([interpreter, arg, script, argv[1:]]),
// the script named by its resolved path.
func (p *program) command(argv []string) (string, []string) {
	if p.interp == nil {
		return p.procPath(), argv
	}
	out := []string{p.interpName}
	if p.interpArg != "" {
		out = append(out, p.interpArg)
	}
	out = append(out, p.path)
	out = append(out, argv[1:]...)
	return p.interp.procPath(), out
}

func (p *program) close() {
	if p == nil {
		return
	}
	if p.fd != nil {
		p.fd.Close()
	}
	if p.interp != nil {
		p.interp.close()
	}
}

// noCloseRange records that close_range(CLOSE_RANGE_CLOEXEC) is not
// available (kernels before 5.11), so the /proc walk is used.
var noCloseRange atomic.Bool

// closeOnExecAbove2 marks every descriptor above 2 close-on-exec, also those
// ccm inherited from whoever started it: an exec child gets only 0, 1 and 2
// (and what os/exec dup2s onto them). Go opens its own descriptors
// close-on-exec, so this changes nothing for the host itself.
func closeOnExecAbove2() {
	if !noCloseRange.Load() {
		if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
			return
		}
		noCloseRange.Store(true)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
