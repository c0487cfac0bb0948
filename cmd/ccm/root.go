package main

import (
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

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
	root.AddCommand(newApplyCommand())
	root.AddCommand(newFactsCommand())
	root.AddCommand(newStatusCommand())
	root.AddCommand(newHieraCommand())
	root.AddCommand(newEnsureCommand())
	root.AddCommand(newSessionCommand())
	root.AddCommand(newPluginCommand())
	return root
}
