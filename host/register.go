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

	"github.com/ccm-dev/ccm/runtime/hostapi"
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

// Register loads the plugin module in file, verifying wantSHA256 (lowercase
// hex, "" = not pinned) against the bytes it read before compiling them. It
// implements hostapi.Plugins.Register: the id is "TYPE@" and the first 12
// hex digits of the module's sha256; the same bytes registered again, from
// any path, return the same id without compiling again.
//
//	id, info, err := h.Register(ctx, "/srv/site/plugins/motd.wasm", "9f86d0...")
//
// # Notes
//
//   - A type the root scope provides (built-in, operator directory, or
//     reserved by the engine) is refused with an error wrapping
//     hostapi.ErrTypeTaken; the compiled module is kept, so registering it
//     again is cheap and fails the same way.
func (h *Host) Register(ctx context.Context, file, wantSHA256 string) (string, abi.PluginInfo, error) {
	wasm, err := readModule(file)
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
	if err := p.loadLocked(ctx); err != nil {
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

// readModule reads a plugin file: a regular file of at most MaxModuleBytes.
func readModule(file string) ([]byte, error) {
	if !filepath.IsAbs(file) {
		return nil, fmt.Errorf("plugin %s: the path must be absolute", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("plugin %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("plugin %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("plugin %s: not a regular file", file)
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
