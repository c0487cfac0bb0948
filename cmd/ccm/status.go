package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
)

// statusUnsupported are the types whose plugin has no current state to
// show, with what to do instead (docs/resources.md).
var statusUnsupported = map[string]string{
	"exec":  "a command has no state to read; `ccm apply --noop` shows whether it would run",
	"apply": "an apply resource is a manifest, not a state; run `ccm apply --noop MANIFEST` to compare it with the host",
}

func newStatusCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status TYPE NAME",
		Aliases: []string{"info"},
		Short:   "Print a resource's current state without changing anything",
		Long: `Status asks the plugin of TYPE for the current state of NAME and prints its
metadata as YAML (JSON with --json). Nothing is changed: the plugin runs with
a read-only caller, so the host refuses every write and runs only the
plugin's probe commands.

TYPE is file, package, service, archive, scaffold or an operator plugin's
type; a relative file or archive NAME is taken from the current directory.
exec and apply have no state to show; scaffold shows whether its target
exists and the files in it (comparing them with a source needs the
manifest: ccm apply --noop).`,
		Example: `  ccm status file /etc/motd
  ccm status package openssh-server --json
  ccm info service sshd`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd, args[0], args[1], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of YAML")
	return cmd
}

func runStatus(cmd *cobra.Command, typ, name string, asJSON bool) error {
	if why, ok := statusUnsupported[typ]; ok {
		return &exitError{exitUsage, fmt.Errorf("status is not supported for %s: %s", typ, why)}
	}
	if name == "" {
		return &exitError{exitUsage, errors.New("NAME is empty; give the resource's name, such as /etc/motd or sshd")}
	}
	if (typ == "file" || typ == "archive") && !filepath.IsAbs(name) {
		abs, err := filepath.Abs(name)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("file %s: %w", name, err)}
		}
		name = abs
	}
	ref := typ + "#" + name

	h, err := newPluginHost()
	if err != nil {
		return &exitError{exitFailed, err}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	defer h.Close(context.WithoutCancel(ctx))
	wd, _ := os.Getwd()
	eng := engine.New(engine.Options{
		Plugins:  h,
		Grants:   trust.Chain{trust.All()},
		Reporter: statusLog{cmd.ErrOrStderr()},
	})
	resp, err := eng.Status(ctx, engine.StatusRequest{Type: typ, Name: name, Dir: wd})
	if err != nil {
		code := exitFailed
		if errors.Is(err, hostapi.ErrUnknownType) {
			code = exitUsage
		}
		return &exitError{code, err}
	}
	if resp.Error != "" {
		return &exitError{exitFailed, fmt.Errorf("%s: %s", ref, resp.Error)}
	}
	// CCM prints the state's metadata; ccm adds the observed ensure
	// (present, absent, running, a version...) when the metadata lacks it.
	// A plugin without metadata shows its whole state document.
	var v any = resp.State
	if meta, ok := resp.State["metadata"].(map[string]any); ok {
		if _, has := meta["ensure"]; !has && resp.FinalEnsure != "" {
			meta["ensure"] = resp.FinalEnsure
		}
		v = meta
	}
	// Through JSON once more so integers (size, mtime) stay integers in YAML.
	b, err := json.Marshal(v)
	if err != nil {
		return &exitError{exitFailed, fmt.Errorf("%s: encode the state: %w", ref, err)}
	}
	if v, err = decodeJSON(string(b)); err != nil {
		return &exitError{exitFailed, fmt.Errorf("%s: decode the state: %w", ref, err)}
	}
	return printValue(cmd.OutOrStdout(), v, !asJSON)
}

// statusLog prints a status plugin's log lines (debug aside) to w; a status
// has no manifest, message or event to report.
type statusLog struct{ w io.Writer }

func (statusLog) ManifestStart(string, int, int) {}
func (statusLog) Message(string)                 {}
func (statusLog) Event(*session.Event, int)      {}
func (l statusLog) Log(resource, level, message string) {
	if level != "debug" {
		fmt.Fprintf(l.w, "%-5s %s: %s\n", strings.ToUpper(level), resource, strings.TrimRight(message, "\n"))
	}
}
