package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func newPluginCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "List and inspect resource type plugins",
		Long: `Plugins provide resource types. The root scope (every manifest) sees the
built-in types and the operator's plugin directories: each TYPE.wasm file in
$CCM_PLUGIN_PATH (colon-separated directories), or when it is not set in
/usr/local/lib/ccm/plugins, /usr/lib/ccm/plugins and
$XDG_DATA_HOME/ccm/plugins (~/.local/share/ccm/plugins). A manifest may declare
more in ccm.plugins, for itself and its child manifests; see docs/plugins.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPluginListCommand(), newPluginInspectCommand(), newPluginCompileCommand())
	return cmd
}

func newPluginListCommand() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plugins every manifest can use: built-in and operator-installed",
		Long: `List loads every built-in plugin and every TYPE.wasm of the operator plugin
directories and prints its type, version, source and providers. A plugin that
cannot be loaded (a file shadowing a built-in type, a file not named after its
type, a broken module) is listed with the reason, and the exit status is 1.`,
		Example: `  ccm plugin list

  # only the operator's plugins, machine-readable
  CCM_PLUGIN_PATH=/opt/ccm/plugins ccm plugin list --json | jq '.[] | select(.source != "built-in")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pluginList(cmd, jsonOut)
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON list")
	return cmd
}

func newPluginInspectCommand() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "inspect FILE|TYPE",
		Short: "Describe one plugin: a .wasm file, or a type every manifest can use",
		Long: `Inspect loads a plugin and prints what it describes: type, version, plugin abi,
providers, ensure values and default, whether it accepts subscribe (refresh),
the capabilities it requests, its properties schema, and the sha256 and source
of its module. An argument holding a "/" or ending in .wasm is a file
(inspecting it does not install or declare it); anything else is a type of
the root scope (built-in or operator-installed).

A plugin only ever gets the capabilities it requests that the scope's grant
also allows. Pin a file in ccm.plugins with the sha256 printed here.`,
		Example: `  # a vendor's plugin before declaring it
  ccm plugin inspect vendor/plugins/nginx_site.wasm

  # a built-in type
  ccm plugin inspect file

  # the pin to write in ccm.plugins
  ccm plugin inspect --json vendor/plugins/nginx_site.wasm | jq -r .sha256`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("inspect takes exactly one FILE or TYPE, got %d arguments; see ccm plugin inspect --help", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginInspect(cmd, args[0], jsonOut)
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON object")
	return cmd
}

// pluginJSON is one plugin in --json output: its description plus where it
// comes from.
type pluginJSON struct {
	abi.PluginInfo
	Type   string `json:"type"`
	Source string `json:"source"`
	SHA256 string `json:"sha256,omitempty"`
	Error  string `json:"error,omitempty"`
}

func toJSON(e host.Entry) pluginJSON {
	p := pluginJSON{PluginInfo: e.Info, Type: e.Type, Source: e.Source, SHA256: e.SHA256}
	if e.Err != nil {
		p.Error = e.Err.Error()
	}
	return p
}

func pluginList(cmd *cobra.Command, jsonOut bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := newPluginHost()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer h.Close(context.Background())

	entries := h.Catalog(ctx)
	failed := 0
	for _, e := range entries {
		if e.Err != nil {
			failed++
		}
	}
	out := cmd.OutOrStdout()
	if jsonOut {
		list := make([]pluginJSON, len(entries))
		for i, e := range entries {
			list[i] = toJSON(e)
		}
		if err := writeJSON(out, list); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TYPE\tVERSION\tSOURCE\tPROVIDERS")
		for _, e := range entries {
			if e.Err != nil {
				fmt.Fprintf(tw, "%s\t-\t%s\terror: %v\n", e.Type, orDash(e.Source), e.Err)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Type, orDash(e.Info.Version), e.Source, orDash(strings.Join(e.Info.Providers, ", ")))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d plugins cannot be loaded", failed, len(entries))}
	}
	return nil
}

// isFileArg tells a FILE argument from a TYPE.
func isFileArg(arg string) bool {
	return strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".wasm")
}

func pluginInspect(cmd *cobra.Command, arg string, jsonOut bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := newPluginHost()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer h.Close(context.Background())

	var e host.Entry
	if isFileArg(arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		e = h.Inspect(ctx, abs)
	} else {
		e = h.Entry(ctx, arg)
	}
	if e.Err != nil {
		if e.Info.Type == "" {
			return &exitError{exitUsage, e.Err}
		}
		// Loadable, but it could not be declared (it shadows a root type).
		fmt.Fprintf(cmd.ErrOrStderr(), "ccm: warning: %v\n", e.Err)
		if errors.Is(e.Err, hostapi.ErrTypeTaken) {
			e.Err = nil
		}
	}
	if jsonOut {
		return writeJSON(cmd.OutOrStdout(), toJSON(e))
	}
	return writeInspect(cmd.OutOrStdout(), e)
}

func writeInspect(w io.Writer, e host.Entry) error {
	i := e.Info
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	ensure := orDash(strings.Join(i.Ensure, ", "))
	if i.DefaultEnsure != "" {
		ensure += " (default " + i.DefaultEnsure + ")"
	} else {
		ensure += " (required)"
	}
	rows := [][2]string{
		{"type", i.Type},
		{"version", orDash(i.Version)},
		{"abi", fmt.Sprint(i.ABI)},
		{"source", e.Source},
		{"sha256", orDash(e.SHA256)},
		{"providers", orDash(strings.Join(i.Providers, ", "))},
		{"ensure", ensure},
		{"refresh", yesNo(i.Refresh)},
		{"batch", yesNo(i.Batch)},
		{"deferred", orDash(strings.Join(i.Deferred, ", "))},
		{"capabilities", ""},
		{"  fs_read", orDash(strings.Join(i.Capabilities.FSRead, ", "))},
		{"  fs_write", orDash(strings.Join(i.Capabilities.FSWrite, ", "))},
		{"  exec", orDash(strings.Join(i.Capabilities.Exec, ", "))},
		{"  net", orDash(strings.Join(i.Capabilities.Net, ", "))},
		{"  users", yesNo(i.Capabilities.Users)},
		{"  probe_exec", orDash(strings.Join(i.Capabilities.ProbeExec, ", "))},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", r[0], r[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(i.PropertiesSchema) == 0 {
		_, err := fmt.Fprintln(w, "properties schema: -")
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, i.PropertiesSchema, "  ", "  "); err != nil {
		buf.Reset()
		buf.Write(i.PropertiesSchema)
	}
	_, err := fmt.Fprintf(w, "properties schema:\n  %s\n", buf.String())
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return &exitError{exitFailed, err}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
