package facts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ccm-dev/ccm/runtime/data"
)

// SystemDir is where system-wide custom facts live.
const SystemDir = "/etc/choria/ccm"

// DirsEnv, when set, replaces the default custom facts directories with
// its list (separated by os.PathListSeparator; empty means none), so tests
// and packagers can point ccm elsewhere without touching /etc or $HOME.
const DirsEnv = "CCM_FACTS_DIRS"

// DefaultDirs returns the custom facts directories in merge order: the
// system dir, then the user's $XDG_CONFIG_HOME/choria/ccm (default
// ~/.config/choria/ccm; a relative XDG_CONFIG_HOME is ignored, as the XDG
// spec says). CCM_FACTS_DIRS overrides both. Nothing is created.
func DefaultDirs() []string {
	if v, ok := os.LookupEnv(DirsEnv); ok {
		return filepath.SplitList(v)
	}
	dirs := []string{SystemDir}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(cfg) {
		cfg = ""
		if home, err := os.UserHomeDir(); err == nil {
			cfg = filepath.Join(home, ".config")
		}
	}
	if cfg != "" {
		dirs = append(dirs, filepath.Join(cfg, "choria", "ccm"))
	}
	return dirs
}

// LoadCustom reads and deep-merges the custom facts of dirs, later wins.
// Within a dir the order is facts.json, facts.yaml, then facts.d/*.json
// and facts.d/*.yaml sorted by name; other names (.yml included) are
// ignored. A missing dir or file is not an error. Symlinked files, a
// symlinked facts.d and symlinked entries are skipped with a warning, so
// that a writable link target cannot inject facts. A file that cannot be
// read or is not a map is an error naming it.
func LoadCustom(dirs []string) (map[string]any, []string, error) {
	out := map[string]any{}
	var warnings []string
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			return nil, warnings, fmt.Errorf("custom facts dir %q: must be an absolute path", dir)
		}
		files, warns, err := customFiles(filepath.Clean(dir))
		warnings = append(warnings, warns...)
		if err != nil {
			return nil, warnings, err
		}
		for _, f := range files {
			m, err := data.LoadFile(f)
			if err != nil {
				return nil, warnings, fmt.Errorf("custom facts: %w; fix or remove the file", err)
			}
			out = data.Merge(out, m)
		}
	}
	return out, warnings, nil
}

// customFiles lists the fact files of one dir in merge order.
func customFiles(dir string) ([]string, []string, error) {
	var files, warnings []string
	for _, name := range []string{"facts.json", "facts.yaml"} {
		p := filepath.Join(dir, name)
		ok, warn, err := regularFile(p)
		if err != nil {
			return nil, warnings, err
		}
		if warn != "" {
			warnings = append(warnings, warn)
		}
		if ok {
			files = append(files, p)
		}
	}

	fd := filepath.Join(dir, "facts.d")
	fi, err := os.Lstat(fd)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return files, warnings, nil
	case err != nil:
		return nil, warnings, fmt.Errorf("custom facts: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return files, append(warnings, fmt.Sprintf("facts: skipped %s: a symlinked facts.d is not read", fd)), nil
	case !fi.IsDir():
		return files, append(warnings, fmt.Sprintf("facts: skipped %s: not a directory", fd)), nil
	}
	entries, err := os.ReadDir(fd) // sorted by name
	if err != nil {
		return nil, warnings, fmt.Errorf("custom facts: %w", err)
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".json" && ext != ".yaml" {
			continue
		}
		p := filepath.Join(fd, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			warnings = append(warnings, fmt.Sprintf("facts: skipped %s: symlinked fact files are not read", p))
		case e.Type().IsRegular():
			files = append(files, p)
		}
	}
	return files, warnings, nil
}

// regularFile reports whether p is a regular file to read; a symlink gives
// a warning instead, a missing file neither.
func regularFile(p string) (bool, string, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("custom facts: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Sprintf("facts: skipped %s: symlinked fact files are not read", p), nil
	case !fi.Mode().IsRegular():
		return false, fmt.Sprintf("facts: skipped %s: not a regular file", p), nil
	}
	return true, "", nil
}
