package host

import (
	"io/fs"
	"maps"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// Limits bound what one plugin instance and one call may use. A zero field
// takes its default (DefaultLimits); a violated limit fails that call with an
// error naming the limit, and the host carries on.
type Limits struct {
	// MemoryPages is the most linear memory, in 64 KiB pages, any module of a
	// plugin instance may grow to: the guest's and the Extism kernel's (which
	// holds every document crossing the boundary) each. Default 4096 (256
	// MiB): a Go guest idles at about 3 MiB, but decoding a RequestBytes
	// document needs several times its size.
	MemoryPages uint32
	// CallTimeout is the wall time one export call may take. Time spent in a
	// ccm_exec that carries its own timeout_ms does not count (the deadline
	// moves by that exec's running time), so a long package install with a
	// timeout is bounded by that timeout, not by this; an exec without
	// timeout_ms is bounded by what is left of this. Default 60 s.
	CallTimeout time.Duration
	// OutputBytes bounds an export's output document. Default 16 MiB.
	OutputBytes int64
	// RequestBytes bounds one host-call request document, and is also the
	// default and largest ccm_fs_read size. Default 16 MiB.
	RequestBytes int64
	// ExecOutputBytes is the default and largest per-stream output a ccm_exec
	// (or Exec) keeps; the rest is drained and dropped, Truncated set.
	// Default 1 MiB.
	ExecOutputBytes int64
	// HostCalls is how many host calls one export call may make; a
	// ccm_apply_batch gets it per request. The call that goes over gets no
	// answer and the export call fails with the limit named, the instance
	// discarded: a guest flooding the host is stopped after about 1 s of
	// work instead of running to call_timeout. Default 100000; a real plugin
	// makes a handful per resource.
	HostCalls int64
}

// DefaultLimits returns the limits a Host uses when none are given.
func DefaultLimits() Limits {
	return Limits{
		MemoryPages:     4096,
		CallTimeout:     60 * time.Second,
		OutputBytes:     16 << 20,
		RequestBytes:    16 << 20,
		ExecOutputBytes: 1 << 20,
		HostCalls:       100000,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	if l.CallTimeout <= 0 {
		l.CallTimeout = d.CallTimeout
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.RequestBytes <= 0 {
		l.RequestBytes = d.RequestBytes
	}
	if l.ExecOutputBytes <= 0 {
		l.ExecOutputBytes = d.ExecOutputBytes
	}
	if l.HostCalls <= 0 {
		l.HostCalls = d.HostCalls
	}
	return l
}

// lowered applies a caller's limits (an apply resource's limits property,
// carried in trust.Caller): per field, the lower of l and c. A scope can
// only ever tighten the host's limits.
func (l Limits) lowered(c trust.Limits) Limits {
	if c.IsZero() {
		return l
	}
	if c.MemoryBytes > 0 {
		l.MemoryPages = min(l.MemoryPages, uint32(max(1, c.MemoryBytes>>16)))
	}
	if c.CallTimeout > 0 {
		l.CallTimeout = min(l.CallTimeout, c.CallTimeout)
	}
	if c.OutputBytes > 0 {
		l.OutputBytes = min(l.OutputBytes, c.OutputBytes)
	}
	if c.RequestBytes > 0 {
		l.RequestBytes = min(l.RequestBytes, c.RequestBytes)
	}
	if c.ExecOutputBytes > 0 {
		l.ExecOutputBytes = min(l.ExecOutputBytes, c.ExecOutputBytes)
	}
	if c.HostCalls > 0 {
		l.HostCalls = min(l.HostCalls, c.HostCalls)
	}
	return l
}

// Option configures New.
type Option func(*config)

type config struct {
	cacheDir    string
	cacheDirSet bool
	sources     []source
	dirs        []source // operator plugin directories (WithPluginDirs), searched after sources
	limits      Limits
	cold        ColdStart
}

// WithCacheDir puts wazero's persistent compilation cache in dir. An empty
// dir disables the persistent cache. Without this option the cache goes to
// $CCM_CACHE_DIR, else /var/cache/ccm when running as root, else
// $XDG_CACHE_HOME/ccm/wazero or ~/.cache/ccm/wazero.
func WithCacheDir(dir string) Option {
	return func(c *config) { c.cacheDir, c.cacheDirSet = dir, true }
}

// WithModules provides plugin modules by type name. It may be combined with
// WithFS; sources are searched in the order the options were given.
func WithModules(modules map[string][]byte) Option {
	m := maps.Clone(modules)
	return func(c *config) { c.sources = append(c.sources, mapSource(m)) }
}

// WithFS provides plugin modules from fsys, one file TYPE.wasm per type at
// its root (cmd/ccm passes the embedded built-ins this way).
func WithFS(fsys fs.FS) Option {
	return func(c *config) { c.sources = append(c.sources, fsSource{fsys}) }
}

// WithBuiltins provides the plugin modules compiled into ccm itself, like
// WithFS. They are trusted code: they run without wazero's per-loop
// termination check, which costs a Go guest about half its time. A built-in
// is still stopped at its deadline when it makes a host call, and one stuck
// in a pure guest loop past its deadline ends the process with a bug
// report (trusted.go, docs/performance.md). Never pass a module ccm did not
// build: any other module goes through WithFS, WithModules or a plugin
// directory, and keeps the check.
func WithBuiltins(fsys fs.FS) Option {
	return func(c *config) {
		c.sources = append(c.sources, builtinSource{fsSource{fsys}})
	}
}

// WithLimits sets the per-instance and per-call limits; zero fields keep
// their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}
