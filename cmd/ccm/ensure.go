package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/sessionstore"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/spf13/cobra"
)

// sessionEnv names the session directory for ensure and session report.
const sessionEnv = "CCM_SESSION_STORE"

// defaultHiera is read by ensure when neither --hiera nor CCM_HIERA_DATA
// is given; its absence is not an error.
const defaultHiera = ".hiera"

// ensureGroup holds the flags of the ensure command group (docs/shell.md),
// accepted before or after the type subcommand.
type ensureGroup struct {
	noop           bool
	session        string
	hiera          string
	readEnv, noEnv bool
	natsContext    string
	detailed       bool
	color          colorMode
	grantsFile     string
	sessionFlag    *cobra.Command // where --session is defined, to ask Changed
}

func newEnsureCommand() *cobra.Command {
	g := &ensureGroup{}
	cmd := &cobra.Command{
		Use:   "ensure TYPE ...",
		Short: "Manage one resource imperatively (for shell scripts)",
		Long: `Ensure converges one resource given on the command line, exactly as a manifest
holding only that resource would: same validation, templates, control,
require/subscribe, health checks and event. It prints one line and exits 0
when the resource did not fail, 1 when it failed, 2 for usage errors (nothing
ran); --detailed-exitcodes uses 0 no change, 2 changed, 4 failed.

With a session (eval "$(ccm session new)", or --session DIR) the event is
recorded there, so later ensures can --require or --subscribe to it and
"ccm session report" adds them up.

Arguments and type flags are template-expanded ('{{ lookup("data.pkg") }}'),
with data from --hiera (default .hiera, or $CCM_HIERA_DATA). --require,
--subscribe, --if and --unless are not: as in manifests, they are references
and expressions.`,
		Example: `  eval "$(ccm session new)"
  ccm ensure package hello
  ccm ensure file /etc/hello.conf --content "greeting=hi" --require package#hello
  ccm ensure service hello --subscribe file#/etc/hello.conf
  ccm session report --remove`,
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &exitError{exitUsage, fmt.Errorf("ccm ensure: unknown resource type %q; the types are file, exec, package (pkg), service (svc), archive and scaffold, and api pipe", args[0])}
		}
		return cmd.Help()
	}
	g.sessionFlag = cmd
	f := cmd.PersistentFlags()
	f.BoolVar(&g.noop, "noop", false, "dry run: decide as usual, change nothing")
	f.StringVar(&g.session, "session", os.Getenv(sessionEnv), "session `DIR` to record the event in and to resolve --require/--subscribe against (default $CCM_SESSION_STORE)")
	f.StringVar(&g.hiera, "hiera", "", "Hiera `SRC` (path or http(s):// URL) whose data templates see (default .hiera if present, or $CCM_HIERA_DATA)")
	f.BoolVar(&g.readEnv, "read-env", true, "read ./.env into Environ")
	f.BoolVar(&g.noEnv, "no-read-env", false, "do not read ./.env")
	f.StringVar(&g.natsContext, "context", "", "NATS context `NAME` or absolute path of a context file, for --hiera kv:// and kvGet (default $NATS_CONTEXT, else CCM)")
	f.BoolVar(&g.detailed, "detailed-exitcodes", false, "exit 0 no change, 2 changed, 4 failed")
	f.StringVar(&g.grantsFile, "grants", "", "YAML/JSON `FILE` with the grant (as ccm apply --grants); needed e.g. for an exec environment variable that loads code (env)")
	g.color = "auto"
	f.Var(&g.color, "color", "colour output: auto, always or never (NO_COLOR is honoured)")

	cmd.AddCommand(newEnsureFileCommand(g))
	cmd.AddCommand(newEnsureExecCommand(g))
	cmd.AddCommand(newEnsurePackageCommand(g))
	cmd.AddCommand(newEnsureServiceCommand(g))
	cmd.AddCommand(newEnsureArchiveCommand(g))
	cmd.AddCommand(newEnsureScaffoldCommand(g))
	cmd.AddCommand(newEnsureAPICommand(g))
	return cmd
}

// ensureRun is what one ensure invocation set up: the engine and, with a
// session, the store its event goes to.
type ensureRun struct {
	facts   map[string]any
	store   *sessionstore.Store
	eng     *engine.Engine
	plugins *host.Host
	nats    *source.Fetcher // kvGet (remote.go)
}

func (r *ensureRun) close() {
	if r.nats != nil {
		r.nats.Close()
	}
	if r.plugins != nil {
		r.plugins.Close(context.Background())
	}
}

// sessionDir returns the session directory in effect, "" for none. A
// session given but empty (--session "" or CCM_SESSION_STORE=) is an error.
func (g *ensureGroup) sessionDir() (string, error) {
	if g.sessionFlag.PersistentFlags().Changed("session") {
		if g.session == "" {
			return "", errors.New("--session is empty; give a session directory (see ccm session new) or leave the flag out")
		}
		return g.session, nil
	}
	if v, ok := os.LookupEnv(sessionEnv); ok && v == "" {
		return "", fmt.Errorf("%s is set but empty; unset it or start a session with eval \"$(ccm session new)\"", sessionEnv)
	}
	return g.session, nil
}

// setup loads what an ensure needs, in the order a failure is cheapest:
// session, facts, .env, data, plugins. factsFile and dataArgs are ensure
// api pipe's --facts and --data. Errors are usage errors: nothing ran.
//
// printsState says the caller prints the event's state document (ensure
// api pipe); otherwise only a session store reads it, and without one the
// plugins are told to skip it (engine.Options.NoState).
func (g *ensureGroup) setup(ctx context.Context, stderr io.Writer, reporter engine.Reporter, needSession, printsState bool, factsFile string, dataArgs []string) (*ensureRun, error) {
	r := &ensureRun{}
	dir, err := g.sessionDir()
	if err != nil {
		return nil, err
	}
	ss := session.New()
	if dir != "" {
		if r.store, err = sessionstore.Open(dir); err != nil {
			return nil, err
		}
		if ss, err = r.store.Session(); err != nil {
			return nil, err
		}
	} else if needSession {
		return nil, fmt.Errorf("--require needs a session: run eval \"$(ccm session new)\" first, or give --session DIR")
	}

	hiera, optional := g.hieraSource()
	r.nats = source.New(source.Options{Context: g.natsContext}) // --hiera kv:// and kvGet (remote.go)
	in, err := loadInputs(ctx, stderr, inputOptions{
		facts:         facts.Options{FactsFile: factsFile},
		readEnv:       g.readEnv && !g.noEnv,
		data:          dataArgs,
		hiera:         hiera,
		hieraOptional: optional,
		fetcher:       r.nats,
		grantsFile:    g.grantsFile,
	})
	if err != nil {
		return nil, err
	}
	r.facts = in.facts
	if r.plugins, err = newPluginHost(); err != nil {
		return nil, err
	}
	r.eng = engine.New(engine.Options{
		Grants:       in.grants,
		Plugins:      r.plugins,
		Facts:        in.facts,
		Environ:      in.environ,
		ExternalData: in.external,
		Noop:         g.noop,
		Reporter:     reporter,
		Session:      ss,
		KVGet:        kvGetHook(r.nats),
		NoState:      r.store == nil && !printsState,
	})
	return r, nil
}

// hieraSource picks the Hiera source: --hiera, else $CCM_HIERA_DATA, else
// .hiera, which is optional (its absence is no error).
func (g *ensureGroup) hieraSource() (name string, optional bool) {
	switch {
	case g.hiera != "":
		return g.hiera, false
	case os.Getenv("CCM_HIERA_DATA") != "":
		return os.Getenv("CCM_HIERA_DATA"), false
	}
	return defaultHiera, true
}

// runEnsure applies one resource of type typ. props builds its properties
// once the facts are known (file ownership defaults to the invoking user).
func (g *ensureGroup) runEnsure(cmd *cobra.Command, typ string, common *commonFlags, props func(facts map[string]any) (map[string]any, error)) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := cmd.OutOrStdout()
	r, err := g.setup(ctx, cmd.ErrOrStderr(), newPrinter(out, useColor(string(g.color), out)), len(common.require) > 0, false, "", nil)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer r.close()
	p, err := props(r.facts)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	common.addTo(p)
	ev, err := r.eng.Ensure(ctx, engine.EnsureRequest{Type: typ, Properties: p})
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("ccm ensure %s: %w", typ, err)}
	}
	if err := r.record(ev); err != nil {
		return &exitError{exitFailed, err}
	}
	if code := eventExit(ev, g.detailed); code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// record appends ev to the session, if there is one.
func (r *ensureRun) record(ev *session.Event) error {
	if r.store == nil {
		return nil
	}
	if err := r.store.Append(ev); err != nil {
		return fmt.Errorf("recording the event in the session: %w", err)
	}
	return nil
}

// eventExit maps one resource's event to the exit status (docs/manifests.md).
func eventExit(ev *session.Event, detailed bool) int {
	ss := session.New()
	ss.Record(ev)
	return exitCode(&engine.Result{Summary: ss.Summary()}, detailed)
}
