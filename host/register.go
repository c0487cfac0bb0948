package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// MaxModuleBytes bounds a plugin module file read from disk (a Go guest is
// about 3.5 MB).
const MaxModuleBytes = 256 << 20

// idSumLen is how many hex digits of a registered module's sha256 its id
// carries ("probe@1a2b3c4d5e6f").
const idSumLen = 12

// reservedTypes are types the engine implements itself: no plugin may
// provide them.
var reservedTypes = []string{"apply"}

// Register loads the plugin module in file for caller's scope, verifying
// wantSHA256 (lowercase hex, "" = not pinned) against the bytes it read
// before compiling them. It implements hostapi.Plugins.Register: the id is
// "TYPE@" and the first 12 hex digits of the module's sha256; the same
// bytes registered again, from any path and any scope, return the same id
// without compiling again (each scope still gets instances of its own).
//
//	id, info, err := h.Register(ctx, caller, "/srv/site/plugins/motd.wasm", "9f86d0...")
//
// # Notes
//
//   - The file is read like a plugin's ccm_fs_read, through caller.Grants:
//     the path is matched against fs_read before anything opens or stats
//     it, and a refusal ("denied: fs_read not granted") says nothing about
//     whether the file exists, nor its digest. Only a regular file of at
//     most MaxModuleBytes is read; a FIFO or device is refused without
//     blocking.
//   - ccm_describe runs under caller.Limits, in an instance of caller's
//     scope.
//   - A type the root scope provides (built-in, operator directory, or
//     reserved by the engine) is refused with an error wrapping
//     hostapi.ErrTypeTaken; the compiled module is kept, so registering it
//     again is cheap and fails the same way.
func (h *Host) Register(ctx context.Context, caller trust.Caller, file, wantSHA256 string) (string, abi.PluginInfo, error) {
	return h.register(ctx, caller, caller, file, wantSHA256)
}

// RegisterBundled implements hostapi.Plugins: the plugin file of a verified
// remote bundle is read without the caller's fs_read grant (the bundle is
// the scope's own, like its manifests and templates), and pinned; the
// plugin itself is described and called under the caller's grants and
// limits, so reading it unconfined gives it no rights.
func (h *Host) RegisterBundled(ctx context.Context, caller trust.Caller, file, bundle, wantSHA256 string) (string, abi.PluginInfo, error) {
	if wantSHA256 == "" {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: a remote bundle's plugins must be pinned", file)
	}
	rel, err := filepath.Rel(filepath.Clean(bundle), filepath.Clean(file))
	if !filepath.IsAbs(bundle) || err != nil || !filepath.IsLocal(rel) {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: not inside its bundle %s", file, bundle)
	}
	reader := caller
	reader.Grants = nil // the bundle's own verified file, read like its manifests
	return h.register(ctx, reader, caller, file, wantSHA256)
}

// register reads file as reader (whose grant the read passes), checks the
// pin, and compiles and describes the module as caller.
func (h *Host) register(ctx context.Context, reader, caller trust.Caller, file, wantSHA256 string) (string, abi.PluginInfo, error) {
	wasm, err := h.readGranted(ctx, reader, file)
	if err != nil {
		return "", abi.PluginInfo{}, err
	}
	got := moduleSum(wasm)
	if wantSHA256 != "" && !strings.EqualFold(wantSHA256, got) {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: sha256 mismatch: pinned %s, the file has %s; if this file is the one you trust, update the pin (sha256sum %s)", file, wantSHA256, got, file)
	}
	p, err := h.registered(file, got, wasm)
	if err != nil {
		return "", abi.PluginInfo{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx, caller); err != nil {
		h.forget(p)
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: %w", file, err)
	}
	info := *p.info
	if !typeName.MatchString(info.Type) {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s describes type %q; a type name is lowercase letters, digits and _, starting with a letter", file, info.Type)
	}
	if err := h.rootTaken(info.Type); err != nil {
		return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: %w", file, err)
	}
	if p.id == "" {
		if err := h.publish(p, info); err != nil {
			return "", abi.PluginInfo{}, fmt.Errorf("plugin %s: %w", file, err)
		}
	}
	return p.id, info, nil
}

// moduleSum is the sha256 of a module in lowercase hex, as sha256sum prints.
func moduleSum(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return hex.EncodeToString(sum[:])
}

// readGranted reads a declared plugin file through caller's fs_read grant,
// with the check and the read of ccm_fs_read (hostcall.FSRead): symlinks resolved
// and each step matched against the grant, a regular file only, opened
// without blocking. The path is matched as written before that, so a file
// outside the grant is never opened or even looked up. Every refusal by the
// grant reads the same, whatever is or is not at the path.
func (h *Host) readGranted(ctx context.Context, caller trust.Caller, file string) ([]byte, error) {
	if !filepath.IsAbs(file) {
		return nil, fmt.Errorf("plugin %s: the path must be absolute", file)
	}
	file = filepath.Clean(file)
	deniedErr := fmt.Errorf("plugin %s: denied: fs_read not granted; a manifest's ccm.plugins are read through its scope's grant: add the file to fs_read in the grants of the apply that runs %s", file, orThis(caller.Manifest))
	if !caller.Grants.Allows(trust.FSRead, file) {
		return nil, deniedErr
	}
	caller.Mode = trust.ModeStatus // reading only
	st := newCallState("ccm.plugins", "", caller, h.limits.lowered(caller.Limits))
	st.HostCalls, st.Names = true, &h.names
	st.RequestBytes = MaxModuleBytes // a module, not a request document
	resp, cerr := hostcall.FSRead(ctx, &st.State, abi.FSReadRequest{Path: file})
	switch {
	case cerr != nil && cerr.Code == abi.CodeDenied:
		return nil, deniedErr
	case cerr != nil && cerr.Code == abi.CodeTooLarge:
		return nil, fmt.Errorf("plugin %s: larger than %d MiB", file, MaxModuleBytes>>20)
	case cerr != nil && !staysInside(caller.Grants, file):
		// A symlink in the grant pointing out of it, dangling or not: "no
		// such file" or an I/O error would tell what is there.
		return nil, deniedErr
	case cerr != nil && cerr.Code == abi.CodeNotFound:
		return nil, fmt.Errorf("plugin open %s: no such file or directory", file)
	case cerr != nil:
		return nil, fmt.Errorf("plugin %s: %s", file, strings.TrimPrefix(cerr.Message, "read "+file+": "))
	}
	return resp.(abi.FSReadResponse).Content, nil
}

// staysInside reports whether file, a path grants allow reading as written,
// still leads inside them with its symlinks resolved: those of the longest
// part that exists (which must resolve), then those at the file itself.
// It decides only which refusal a failed read shows.
func staysInside(grants trust.Chain, file string) bool {
	head, rest := file, ""
	for {
		if _, err := os.Lstat(head); err == nil {
			break
		}
		if head == "/" {
			return false
		}
		rest = filepath.Join(filepath.Base(head), rest)
		head = filepath.Dir(head)
	}
	resolved, err := filepath.EvalSymlinks(head)
	if err != nil {
		return false // a dangling symlink on the way
	}
	full := filepath.Join(resolved, rest)
	return grants.Allows(trust.FSRead, full) && linksInside(grants, full)
}

// linksInside reports whether the symlinks at file, followed one hop at a
// time (at most 40), all name paths that grants allow reading. Only
// granted paths are looked at: each hop is checked before it is read.
func linksInside(grants trust.Chain, file string) bool {
	for range 40 {
		target, err := os.Readlink(file)
		if err != nil {
			return true // not a symlink (or gone): nothing more to follow
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(file), target)
		}
		file = filepath.Clean(target)
		if !grants.Allows(trust.FSRead, file) {
			return false
		}
	}
	return false
}

// orThis names a manifest in a message, or says "this manifest".
func orThis(manifest string) string {
	if manifest == "" {
		return "this manifest"
	}
	return manifest
}

// readModule reads a plugin file the operator named (in an operator plugin
// directory, or given to `ccm plugin inspect`): a regular file of at most
// MaxModuleBytes. It opens with O_NONBLOCK, so a FIFO cannot hang ccm, and
// checks the open file (fstat) before reading anything: a FIFO, device or
// directory is refused, and so is a file above the size bound.
func readModule(file string) ([]byte, error) {
	if !filepath.IsAbs(file) {
		return nil, fmt.Errorf("plugin %s: the path must be absolute", file)
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("plugin %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("plugin %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("plugin %s: not a regular file (%s); a plugin module is a .wasm file", file, hostcall.TypeOf(st.Mode()))
	}
	if st.Size() > MaxModuleBytes {
		return nil, fmt.Errorf("plugin %s: larger than %d MiB", file, MaxModuleBytes>>20)
	}
	wasm, err := io.ReadAll(io.LimitReader(f, MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("plugin %w", err)
	}
	if len(wasm) > MaxModuleBytes {
		return nil, fmt.Errorf("plugin %s: larger than %d MiB", file, MaxModuleBytes>>20)
	}
	return wasm, nil
}

// registered returns the entry for a module's bytes, creating it
// (uncompiled) the first time they are seen.
func (h *Host) registered(file, sum string, wasm []byte) (*plugin, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if p, ok := h.bySum[sum]; ok {
		return p, nil
	}
	typ := strings.TrimSuffix(filepath.Base(file), ".wasm") // for messages until described
	p := &plugin{host: h, typ: typ, origin: file, sum: sum, registered: true, wasm: wasm}
	h.bySum[sum] = p
	return p, nil
}

// forget drops an entry whose load failed, so a later Register retries.
func (h *Host) forget(p *plugin) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bySum[p.sum] == p && p.id == "" {
		delete(h.bySum, p.sum)
	}
}

// publish makes a registered module callable under its id. p.mu is held.
func (h *Host) publish(p *plugin, info abi.PluginInfo) error {
	id := info.Type + "@" + p.sum[:idSumLen]
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	if other, ok := h.plugins[id]; ok && other != p {
		return fmt.Errorf("BUG: plugin id %s of %s collides with %s", id, p.origin, other.origin)
	}
	p.typ, p.id = info.Type, id
	h.plugins[id] = p
	return nil
}

// rootTaken refuses a registered type that the root scope provides.
func (h *Host) rootTaken(typ string) error {
	if slices.Contains(reservedTypes, typ) {
		return fmt.Errorf("provides type %q, which is built into the engine: %w; a plugin may not shadow a built-in type", typ, hostapi.ErrTypeTaken)
	}
	for _, s := range h.sources {
		if !slices.Contains(s.types(), typ) {
			continue
		}
		o := s.origin(typ)
		if o == builtinOrigin {
			return fmt.Errorf("provides type %q, which is built in: %w; a plugin may not shadow a built-in type, rename the plugin's type", typ, hostapi.ErrTypeTaken)
		}
		return fmt.Errorf("provides type %q, which the operator installed as %s: %w; a declared plugin may not shadow it, rename the plugin's type or remove one of the two", typ, o, hostapi.ErrTypeTaken)
	}
	return nil
}
