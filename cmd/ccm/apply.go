package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/spf13/cobra"
)

type applyOptions struct {
	noop, monitorOnly bool
	jsonOut           bool
	render            bool
	detailed          bool
	diff, noDiff      bool
	report, noReport  bool
	readEnv, noEnv    bool
	color             colorMode
	data              []string
	factKV            []string
	factsFile         string
	grantsFile        string
	hiera             string
	remote            remoteOptions
	reg               regFlags // registration.go
}

func newApplyCommand() *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply MANIFEST",
		Short: "Apply a manifest: converge every resource it declares, in order",
		Long: `Apply loads MANIFEST (a YAML or JSON file, or a bundle from https://... or
obj://BUCKET/KEY, see docs/remote.md), resolves its data and templates, checks every
resource with its plugin, then applies the resources in declaration order and
prints one line per resource and a run summary.

Nothing changes when the manifest cannot be loaded (exit status 2). The exit
status is 1 when any resource failed, 0 otherwise; --detailed-exitcodes uses
Puppet's convention instead (0 no changes, 2 changes, 4 failures, 6 both).`,
		Example: `  # converge, then check that a second run is stable
  ccm apply site.yaml

  # dry run: report what would change
  ccm apply site.yaml --noop

  # only run health checks
  ccm apply site.yaml --monitor-only

  # pass data (wins over the manifest's own data at every level)
  ccm apply site.yaml --data port=8080 --data extra.yaml

  # external Hiera data, resolved against this host's facts (--data still wins)
  ccm apply site.yaml --hiera https://config.example.com/hiera.yaml

  # confine the whole run: only these paths and programs
  ccm apply site.yaml --grants grants.yaml

  # show what would be applied: data, defaults and templates resolved, children included
  ccm apply site.yaml --render

  # a signed vendor bundle from a NATS object store, pinned
  ccm apply obj://VENDOR/site.tar.gz --sha256 3b1f... --trusted-keys /etc/ccm/trusted.keys

  # machine-readable result
  ccm apply site.yaml --json | jq .summary`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("apply takes exactly one MANIFEST (a YAML or JSON file, or an https:// or obj:// bundle), got %d arguments; see ccm apply --help", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args[0])
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.noop, "noop", false, "dry run: decide as usual, change nothing")
	f.BoolVar(&o.monitorOnly, "monitor-only", false, "run health checks only, apply nothing")
	f.StringArrayVar(&o.data, "data", nil, "data `KEY=VALUE` or a YAML/JSON FILE, merged over every manifest's data (repeatable)")
	f.StringArrayVar(&o.data, "data-file", nil, "alias of --data FILE")
	f.StringVar(&o.hiera, "hiera", os.Getenv("CCM_HIERA_DATA"), "Hiera `SRC` (path, file://, http(s):// URL or kv://BUCKET/KEY) resolved against the facts and merged over every manifest's data, under --data (default $CCM_HIERA_DATA)")
	f.StringArrayVar(&o.factKV, "fact", nil, "extra fact `KEY=VALUE` (dotted keys nest; repeatable; wins over --facts)")
	f.StringVar(&o.factsFile, "facts", "", "YAML/JSON `FILE` of extra facts")
	f.StringVar(&o.grantsFile, "grants", "", "YAML/JSON `FILE` with the root scope's grant (fs_read, fs_write, exec, net, users); default: everything")
	f.BoolVar(&o.render, "render", false, "print the resolved manifest tree as YAML (children included) and exit without applying")
	f.BoolVar(&o.jsonOut, "json", false, "print events and summary as one JSON document instead of log lines")
	f.BoolVar(&o.diff, "diff", false, "show content diffs in a real run too (always shown with --noop)")
	f.BoolVar(&o.noDiff, "no-diff", false, "never show content diffs, only \"content changed (diff hidden)\"")
	f.BoolVar(&o.detailed, "detailed-exitcodes", false, "exit 0 no changes, 2 changes, 4 failures, 6 changes and failures")
	f.BoolVar(&o.report, "report", true, "print the run summary")
	f.BoolVar(&o.noReport, "no-report", false, "do not print the run summary")
	f.BoolVar(&o.readEnv, "read-env", true, "read ./.env into Environ")
	f.BoolVar(&o.noEnv, "no-read-env", false, "do not read ./.env")
	o.color = "auto"
	f.Var(&o.color, "color", "colour output: auto, always or never (NO_COLOR is honoured)")
	_ = f.MarkHidden("data-file")
	o.remote.addFlags(f, true)
	o.reg.addFlags(f)
	return cmd
}

func (o *applyOptions) run(cmd *cobra.Command, path string) error {
	if o.noop && o.monitorOnly {
		return &exitError{exitUsage, errors.New("--noop and --monitor-only cannot be combined")}
	}
	if o.diff && o.noDiff {
		return &exitError{exitUsage, errors.New("--diff and --no-diff cannot be combined")}
	}
	ctx := cmd.Context() // ended by SIGINT and SIGTERM (signals.go)

	fetcher, err := o.remote.fetcher() // remote.go
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer fetcher.Close()
	in, err := loadInputs(ctx, cmd.ErrOrStderr(), inputOptions{
		facts:      facts.Options{FactsFile: o.factsFile, Facts: o.factKV},
		readEnv:    o.readEnv && !o.noEnv,
		data:       o.data,
		hiera:      o.hiera,
		fetcher:    fetcher,
		grantsFile: o.grantsFile,
	})
	if err != nil {
		return &exitError{exitUsage, err}
	}

	plugins, err := newPluginHost()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer plugins.Close(context.Background())

	reg, err := o.reg.hooks(o.remote.context)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer reg.close()

	out := cmd.OutOrStdout()
	var reporter engine.Reporter
	if o.jsonOut || o.render {
		// stdout holds one document (JSON or YAML); warnings go to stderr.
		errOut := cmd.ErrOrStderr()
		reporter = logsOnly{newPrinter(errOut, useColor(string(o.color), errOut))}
	} else {
		reporter = newPrinter(out, useColor(string(o.color), out)).withStatus()
	}
	// NO_SCHEMA_VALIDATION is a debug aid (docs/manifests.md): it skips the check of
	// properties against the plugins' schemas, never ccm_validate.
	noSchema := os.Getenv("NO_SCHEMA_VALIDATION") != "" && os.Getenv("NO_SCHEMA_VALIDATION") != "0"
	if noSchema {
		fmt.Fprintln(cmd.ErrOrStderr(), "ccm: warning: NO_SCHEMA_VALIDATION is set: properties are not checked against the plugins' schemas (each plugin's ccm_validate still runs)")
	}
	eng := engine.New(engine.Options{
		NoSchemaValidation: noSchema,
		Plugins:            plugins,
		Facts:              in.facts,
		Environ:            in.environ,
		ExternalData:       in.external,
		Noop:               o.noop,
		HealthCheckOnly:    o.monitorOnly,
		Grants:             in.grants,
		Reporter:           reporter,
		Diff:               o.diffMode(),
		Remote:             remoteHook(fetcher),
		KVGet:              kvGetHook(fetcher),
		Register:           reg.registerHook(),
		Registrations:      reg.lookup,
		RootPin:            o.remote.sha256,
		// Only --json prints the plugins' state documents.
		NoState: !o.jsonOut,
	})
	if o.render {
		docs, err := eng.Render(ctx, path)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		if o.jsonOut {
			return writeRenderedJSON(out, docs)
		}
		return writeRendered(out, docs)
	}
	res, err := eng.Run(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{exitUsage, fmt.Errorf("%v while loading %s; nothing was applied: %w", context.Cause(ctx), path, err)}
		}
		if o.jsonOut {
			writeLoadError(out, err)
		}
		return &exitError{exitUsage, err}
	}

	if o.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		var interrupted string
		if res.Interrupted != nil {
			interrupted = res.Interrupted.Error()
		}
		if err := enc.Encode(struct {
			Events      []*session.Event `json:"events"`
			Summary     session.Summary  `json:"summary"`
			Interrupted string           `json:"interrupted,omitempty"`
		}{res.Events, res.Summary, interrupted}); err != nil {
			return &exitError{exitFailed, err}
		}
	} else if o.report && !o.noReport {
		fmt.Fprintln(out)
		if err := res.Summary.WriteText(out); err != nil {
			return err
		}
	}
	if res.Interrupted != nil {
		notRun := 0
		for _, ev := range res.Events {
			if ev.Skipped && len(ev.Messages) > 0 && strings.HasPrefix(ev.Messages[len(ev.Messages)-1], "not applied: the run was ") {
				notRun++
			}
		}
		return &exitError{exitFailed, fmt.Errorf("run %v: the resource running then was stopped, %d resources were not started", res.Interrupted, notRun)}
	}
	if code := exitCode(res, o.detailed); code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// loadError is the --json document of a run that could not start.
type loadError struct {
	Error   string `json:"error"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Excerpt string `json:"excerpt,omitempty"`
}

// errAt matches the "FILE:LINE[:COL]: " prefix engine errors start with.
var errAt = regexp.MustCompile(`^(/[^:\n]+|[^/:\n][^:\n]*\.(?:ya?ml|json|jet)):(\d+)(?::(\d+))?: `)

// writeLoadError prints err as one JSON document, so that a --json
// consumer gets JSON whether or not the run started. The position comes
// from a manifest syntax error when there is one, otherwise from the first
// error's FILE:LINE prefix.
func writeLoadError(w io.Writer, err error) {
	doc := loadError{Error: err.Error()}
	var me *manifest.Error
	if errors.As(err, &me) {
		doc.File, doc.Line, doc.Column, doc.Excerpt = me.File, me.Line, me.Column, me.Excerpt
		doc.Error = strings.TrimSuffix(doc.Error, "\n"+me.Excerpt)
	} else if m := errAt.FindStringSubmatch(doc.Error); m != nil {
		doc.File = m[1]
		doc.Line, _ = strconv.Atoi(m[2])
		doc.Column, _ = strconv.Atoi(m[3])
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc)
}

// exitCode maps a run to the process exit status (docs/manifests.md).
func exitCode(res *engine.Result, detailed bool) int {
	if !detailed {
		if res.Failed() {
			return exitFailed
		}
		return exitOK
	}
	code := 0
	if res.Changed() {
		code |= 2
	}
	if res.Failed() {
		code |= 4
	}
	return code
}

func (o *applyOptions) diffMode() engine.DiffMode {
	switch {
	case o.noDiff:
		return engine.DiffNever
	case o.diff:
		return engine.DiffAlways
	}
	return engine.DiffAuto
}
