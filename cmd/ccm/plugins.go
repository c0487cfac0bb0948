package main

import (
	"fmt"
	"os"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/plugins"
)

// newPluginHost wires the WASM host with the built-in plugins embedded in
// this binary and the operator plugin directories (host.DefaultPluginDirs:
// $CCM_PLUGIN_PATH, else the system and user directories). A compilation
// cache that cannot be used is a warning, not an error: the run only gets
// slower.
func newPluginHost() (*host.Host, error) {
	h, err := host.New(host.WithBuiltins(plugins.Modules()), host.WithPluginDirs(host.DefaultPluginDirs()...), coldStart())
	if err != nil {
		return nil, fmt.Errorf("starting the plugin host: %w", err)
	}
	if w := h.CacheWarning(); w != nil {
		fmt.Fprintf(os.Stderr, "ccm: warning: %v\n", w)
	}
	return h, nil
}
