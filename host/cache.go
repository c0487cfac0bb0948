package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
)

// defaultCacheDir is where the compilation cache lives when WithCacheDir is
// not given; "" when no location can be worked out (no persistent cache).
func defaultCacheDir() string {
	if d := os.Getenv("CCM_CACHE_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/ccm"
	}
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ccm", "wazero")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "ccm", "wazero")
}

// openCache returns wazero's persistent cache in dir. It never fails: when
// dir is "" or unusable it returns an in-memory cache (so the Extism kernel
// shared by every type still compiles only once per process) and says why
// in the error, which the caller logs as a warning.
func openCache(dir string) (wazero.CompilationCache, error) {
	if dir == "" {
		return wazero.NewCompilationCache(), nil
	}
	// The cache holds machine code that ccm runs (and maps, on Linux):
	// a directory someone else can write to is not used.
	if err := privateDir("compilation cache", dir); err != nil {
		return wazero.NewCompilationCache(), fmt.Errorf("%w; compiling without a persistent cache (set CCM_CACHE_DIR to a private directory)", err)
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return wazero.NewCompilationCache(), fmt.Errorf("open compilation cache %s: %w; compiling without a persistent cache (set CCM_CACHE_DIR to a writable directory)", dir, err)
	}
	return c, nil
}

// wipeCache removes the compiled entries wazero keeps under dir (in its
// wazero-<version>-<arch>-<os> subdirectories) and ccm's markers of them
// (ccm-compiled, cold.go), so a corrupt entry is rebuilt on the next
// compile. It deletes only names wazero and the markers use (64 hex digits,
// or their .tmp files), never anything else a mistaken dir holds.
func wipeCache(dir string) error {
	subs, err := filepath.Glob(filepath.Join(dir, "wazero-*"))
	if err != nil {
		return fmt.Errorf("wipe compilation cache %s: %w", dir, err)
	}
	// The compiled-module markers (cold.go) go with the entries.
	subs = append(subs, filepath.Join(dir, markerDir))
	var firstErr error
	for _, sub := range subs {
		entries, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !isCacheEntryName(e.Name()) {
				continue
			}
			if err := os.Remove(filepath.Join(sub, e.Name())); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("wipe compilation cache %s: %w", dir, err)
			}
		}
	}
	return firstErr
}

func isCacheEntryName(name string) bool {
	name, _, _ = strings.Cut(name, ".")
	if len(name) != 64 {
		return false
	}
	for _, r := range name {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
