package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/hostapi"
)

// SupportedABIs are the plugin ABI versions this host speaks.
var SupportedABIs = []int{1}

// Host loads resource plugins and runs their calls. Build it with New; it is
// safe for concurrent use (calls to one type are serialised on that type's
// instance, different types run in parallel).
type Host struct {
	limits   Limits
	sources  []source
	cacheDir string // "" = no persistent cache
	cache    wazero.CompilationCache
	kernel   kernelPins // Extism's kernel kept compiled (kernelpin.go)
	// stuck is what happens to a built-in call still running stuckGrace
	// after its context ended (trusted.go); tests replace it.
	stuck      func(typ, export string, grace time.Duration, cause error)
	stuckGrace time.Duration
	// backstopAfter is when, after stuckGrace, an OS timer aborts the
	// process in case the watchdog itself cannot run (trusted.go).
	backstopAfter time.Duration
	hostFuncs     []extism.HostFunction
	names         hostcall.NameCache
	locks         runLocks // run lock files (lock.go)

	cold ColdStart // interpreting built-ins not compiled yet (cold.go)

	mu                sync.Mutex
	backgroundStarted bool               // ColdStart.Background was called
	plugins           map[string]*plugin // by id: the type name, or type@sum for a registered file
	bySum             map[string]*plugin // registered files by the sha256 of their bytes
	closed            bool
	cacheWarning      error
}

var _ hostapi.Plugins = (*Host)(nil)

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("plugin host is closed")

// typeName is what a resource type may be called; it also keeps a type name
// from reaching outside the root of a WithFS file system.
var typeName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// extismLogLevel makes Extism hand guest log_* lines to each instance's
// logger (its default drops them all). It is Extism's process-wide setting,
// so it is set once; Extism's own debug lines are filtered in logging.go.
var extismLogLevel sync.Once

// New returns a Host. It compiles nothing: a type is compiled on its first
// Info (or Preload).
//
//	h, err := host.New(host.WithFS(plugins.Modules()))
//
// # Notes
//
//   - A compilation cache that cannot be opened is not an error: the Host
//     compiles without it. Use CacheWarning to show why.
func New(opts ...Option) (*Host, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	limits := c.limits.withDefaults()
	if limits.MemoryPages > 65536 {
		return nil, fmt.Errorf("memory limit of %d pages is above the wasm32 maximum of 65536 pages (4 GiB); lower Limits.MemoryPages", limits.MemoryPages)
	}
	dir := c.cacheDir
	if !c.cacheDirSet {
		dir = defaultCacheDir()
	}
	extismLogLevel.Do(func() { extism.SetLogLevel(extism.LogLevelDebug) })
	h := &Host{
		limits:        limits,
		sources:       append(slices.Clip(c.sources), c.dirs...),
		plugins:       make(map[string]*plugin),
		bySum:         make(map[string]*plugin),
		stuck:         exitStuck,
		stuckGrace:    defaultStuckGrace,
		backstopAfter: defaultBackstopAfter,
		cold:          c.cold,
	}
	var err error
	h.cache, err = openCache(dir)
	if err == nil {
		h.cacheDir = dir
	} else {
		h.cacheWarning = err
	}
	h.hostFuncs = h.hostFunctions()
	return h, nil
}

// CacheWarning says why the persistent compilation cache is not in use, or
// is nil when it is (or was disabled on purpose). cmd/ccm logs it.
func (h *Host) CacheWarning() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cacheWarning
}

// plugin returns the entry for id, creating it (uncompiled) on first use
// when id is a type name; a registered plugin's id must have been returned
// by Register.
func (h *Host) plugin(typ string) (*plugin, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if p, ok := h.plugins[typ]; ok {
		return p, nil
	}
	if !typeName.MatchString(typ) {
		return nil, fmt.Errorf("resource type %q: %w (type names are lowercase letters, digits and _)", typ, hostapi.ErrUnknownType)
	}
	p := &plugin{host: h, typ: typ}
	h.plugins[typ] = p
	return p, nil
}

// module finds the wasm bytes of typ in the sources and says where they came
// from ("built-in" or the file). Built-in sources are searched in order, the
// first wins; an operator directory may not provide a type that a built-in
// or another operator directory provides too (an error naming both).
// trusted is true when the module comes from WithBuiltins.
func (h *Host) module(typ string) (wasm []byte, origin string, trusted bool, err error) {
	var origins []string
	for _, s := range h.sources {
		_, isDir := s.(dirSource)
		if wasm != nil && !isDir {
			continue
		}
		b, err := s.module(typ)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", false, fmt.Errorf("read plugin module for type %q: %w", typ, err)
		}
		origins = append(origins, s.origin(typ))
		if wasm == nil {
			_, trusted = s.(builtinSource)
			wasm, origin = b, s.origin(typ)
		}
	}
	if len(origins) > 1 {
		return nil, "", false, shadowError(typ, origins[0], origins[1])
	}
	if wasm == nil {
		return nil, "", false, fmt.Errorf("resource type %q: %w: no plugin provides it (plugin types here: %s)", typ, hostapi.ErrUnknownType, strings.Join(h.types(), ", "))
	}
	return wasm, origin, trusted, nil
}

// sumOf returns the sha256 of typ's module, wasm, in lowercase hex. A
// trusted (built-in) module's is the one its source recorded when it was
// built (plugins.Modules' Sum, checked by that package's tests), when the
// source has one: hashing a 3.5 MB module was a tenth of a one-resource
// run. Any other module is hashed.
func (h *Host) sumOf(typ string, wasm []byte, trusted bool) string {
	if trusted {
		// The source module() took typ from: the first built-in source
		// that has it (a trusted module comes from no other kind).
		for _, s := range h.sources {
			b, ok := s.(builtinSource)
			if !ok {
				continue
			}
			if _, err := fs.Stat(b.fsys, typ+".wasm"); err != nil {
				continue
			}
			if r, ok := b.fsys.(interface{ Sum(string) (string, bool) }); ok {
				if sum, ok := r.Sum(typ + ".wasm"); ok {
					return sum
				}
			}
			break
		}
	}
	return moduleSum(wasm)
}

// released tells the built-in sources that typ's module is compiled (see
// fsSource.release).
func (h *Host) released(typ string) {
	for _, s := range h.sources {
		if b, ok := s.(builtinSource); ok {
			b.release(typ)
		}
	}
}

// shadowError refuses a second provider of typ in the root scope.
func shadowError(typ, first, second string) error {
	if first == builtinOrigin {
		return fmt.Errorf("operator plugin %s provides type %q, which is built in: %w; a plugin may not shadow a built-in type, remove the file", second, typ, hostapi.ErrTypeTaken)
	}
	return fmt.Errorf("type %q is provided by both %s and %s: %w; remove one of the two files", typ, first, second, hostapi.ErrTypeTaken)
}

// types lists the type names the sources provide, sorted, for messages.
func (h *Host) types() []string {
	var out []string
	for _, s := range h.sources {
		for _, t := range s.types() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Close releases every instance and compiled module, then the cache. Calls
// made after Close fail with ErrClosed.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	plugins := h.plugins
	for _, p := range h.bySum {
		if p.id == "" || plugins[p.id] != p {
			plugins["@"+p.sum] = p // refused or failed registrations hold a compiled module too
		}
	}
	h.plugins, h.bySum = nil, nil
	h.mu.Unlock()

	var errs []error
	for _, p := range plugins {
		errs = append(errs, p.close(ctx))
	}
	errs = append(errs, h.closeKernelPins(ctx))
	if h.cache != nil {
		if err := h.cache.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close compilation cache: %w", err))
		}
	}

	return errors.Join(errs...)
}

// source provides plugin modules by type name; fs.ErrNotExist = not here.
type source interface {
	module(typ string) ([]byte, error)
	types() []string
	// origin says where typ's module comes from: builtinOrigin, or a file.
	origin(typ string) string
}

// builtinOrigin is the origin of modules given with WithModules and WithFS.
const builtinOrigin = "built-in"

type mapSource map[string][]byte

func (m mapSource) types() []string      { return slices.Collect(maps.Keys(m)) }
func (m mapSource) origin(string) string { return builtinOrigin }

func (m mapSource) module(typ string) ([]byte, error) {
	if b, ok := m[typ]; ok {
		return b, nil
	}
	return nil, fs.ErrNotExist
}

type fsSource struct{ fsys fs.FS }

// builtinSource holds the modules compiled into ccm (WithBuiltins).
type builtinSource struct{ fsSource }

func (s fsSource) types() []string {
	names, _ := fs.Glob(s.fsys, "*.wasm")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".wasm")
	}
	return names
}

func (s fsSource) origin(string) string { return builtinOrigin }

// release tells an fs.FS that lent typ's module (plugins.Modules) that it
// is compiled and its bytes will not be read again by this host: the
// built-ins drop their pages from the process.
func (s fsSource) release(typ string) {
	if r, ok := s.fsys.(interface{ Release(string) }); ok {
		r.Release(typ + ".wasm")
	}
}

func (s fsSource) module(typ string) ([]byte, error) {
	// An fs.FS that lends its bytes (plugins.Modules, the embedded
	// built-ins) is not copied: 3.5 MB per type, 5 % of a 1-resource run.
	if l, ok := s.fsys.(interface{ Lend(string) ([]byte, error) }); ok {
		return l.Lend(typ + ".wasm")
	}
	return fs.ReadFile(s.fsys, typ+".wasm")
}
