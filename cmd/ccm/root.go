package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// logDebug is the global --debug: debug lines are printed, not dropped.
var logDebug bool

// colorMode is the value of --color: auto, always or never, checked when
// the flag is parsed so that a typo is a usage error, not "auto".
type colorMode string

func (c *colorMode) String() string { return string(*c) }
func (c *colorMode) Type() string   { return "auto|always|never" }
func (c *colorMode) Set(v string) error {
	switch v {
	case "auto", "always", "never":
		*c = colorMode(v)
		return nil
	}
	return fmt.Errorf("%q is not a colour mode; use auto, always or never", v)
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "ccm",
		Short: "Converge a host from YAML manifests, with resource types as sandboxed WebAssembly plugins",
		Long: `ccm applies CCM-compatible YAML manifests: files, commands, packages and services
declared in order, with data, templates, require, subscribe and noop.

Every resource type, the built-in ones included, is a WebAssembly plugin that can
touch the host only through host calls checked against a capability grant.`,
		Example: `  # converge a host
  ccm apply manifest.yaml

  # see what would change, without changing anything
  ccm apply manifest.yaml --noop`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The peer's global log-level flags, accepted before the subcommand
	// (ccm --debug apply m.yaml) as well as after it.
	pf := root.PersistentFlags()
	pf.BoolVar(&logDebug, "debug", false, "also print debug lines (plugin ccm_log debug messages)")
	pf.Bool("info", false, "print informational lines (the default; accepted for compatibility)")
	root.AddCommand(newApplyCommand())
	root.AddCommand(newFactsCommand())
	root.AddCommand(newStatusCommand())
	root.AddCommand(newHieraCommand())
	root.AddCommand(newEnsureCommand())
	root.AddCommand(newSessionCommand())
	root.AddCommand(newPluginCommand())
	root.AddCommand(newBundleCommand()) // bundle.go
	root.AddCommand(newAgentCommand(), newFleetCommand())
	root.AddCommand(newRegistrationCommand()) // registration.go
	return root
}
