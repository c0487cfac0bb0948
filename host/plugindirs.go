package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPluginDirs are the operator plugin directories: $CCM_PLUGIN_PATH
// (colon-separated absolute directories; set but empty = none) when it is
// set, else the system directories /usr/local/lib/ccm/plugins and
// /usr/lib/ccm/plugins and the user's $XDG_DATA_HOME/ccm/plugins
// (~/.local/share/ccm/plugins). Relative entries are ignored. Nothing here
// creates a directory.
func DefaultPluginDirs() []string {
	if v, ok := os.LookupEnv("CCM_PLUGIN_PATH"); ok {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if filepath.IsAbs(d) {
				out = append(out, filepath.Clean(d))
			}
		}
		return out
	}
	dirs := []string{"/usr/local/lib/ccm/plugins", "/usr/lib/ccm/plugins"}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return append(dirs, filepath.Join(d, "ccm", "plugins"))
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, ".local", "share", "ccm", "plugins"))
	}
	return dirs
}

// dirSource serves TYPE.wasm files from an operator plugin directory. A
// missing directory provides nothing.
type dirSource string

func (d dirSource) origin(typ string) string { return filepath.Join(string(d), typ+".wasm") }

func (d dirSource) module(typ string) ([]byte, error) {
	file := d.origin(typ)
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	b, err := readModule(file)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (d dirSource) types() []string {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".wasm")
		if ok && typeName.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

// WithPluginDirs adds operator plugin directories: every TYPE.wasm file in
// them provides type TYPE in the root scope, so everywhere. A directory that
// does not exist provides nothing (it is never created). They come after
// the built-in sources whatever the order of options; a type provided by a
// built-in and a directory, or by two directories, is an error naming both
// when the type is used.
func WithPluginDirs(dirs ...string) Option {
	return func(c *config) {
		for _, d := range dirs {
			c.dirs = append(c.dirs, dirSource(filepath.Clean(d)))
		}
	}
}
