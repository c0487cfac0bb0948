package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/runtime/agent"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/natsctx"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
)

type agentOptions struct {
	config string
	once   bool
	node   string
	noNATS bool

	metrics *agent.Metrics
	facts   *agent.FactsCache
}

func newAgentCommand() *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use:   "agent --config FILE",
		Short: "Converge this host continuously: apply the configured manifests on an interval and on change, and publish the results",
		Long: `Agent reads CCM's agent configuration (interval, manifests, cache_dir,
nats_context, external_data_url, ...; see docs/agent.md) and applies each manifest
source (a path, https:// or obj://BUCKET/KEY bundle) at start, then every interval
plus a random jitter, and as soon as an obj:// source is replaced in its object store.

Every run goes through the same engine and sandbox as ccm apply, confined by the
configuration's grants file; each run's summary and failed resources are published
to the JetStream stream CCM_RESULTS on ccm.agent.result.NODE.

SIGINT or SIGTERM stops the resource running then and exits; SIGHUP reloads FILE
between runs.`,
		Example: `  # run as the systemd unit does
  ccm agent --config /etc/choria/ccm/agent.yaml

  # one pass over the manifests, results published, then exit (1 if any failed)
  ccm agent --config agent.yaml --once`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "agent configuration `FILE` (YAML, CCM's keys)")
	f.BoolVar(&o.once, "once", false, "apply every manifest once, publish the results and exit")
	f.StringVar(&o.node, "node", "", "node identity in published results (default: the configuration's node, else the host name)")
	f.BoolVar(&o.noNATS, "no-nats", false, "do not connect to NATS: no results published, obj:// sources unavailable")
	return cmd
}

func (o *agentOptions) loadConfig() (*agent.Config, error) {
	src, err := os.ReadFile(o.config)
	if err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	return agent.ParseConfig(src, o.config)
}

// run serves the configuration until the command's context ends; SIGHUP
// re-reads it between runs (a configuration that does not parse is
// reported and the running one kept).
func (o *agentOptions) run(cmd *cobra.Command) error {
	if o.config == "" {
		return &exitError{exitUsage, errors.New("agent needs --config FILE; see ccm agent --help and docs/agent.md")}
	}
	cfg, err := o.loadConfig()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	hup := make(chan os.Signal, 1)
	reload := make(chan struct{}, 1)
	if !o.once {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go func() {
			for {
				select {
				case <-cmd.Context().Done():
					return
				case <-hup:
					select {
					case reload <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	// Metrics and their listener live as long as the agent: a reload
	// keeps the counters and the port.
	reg := prometheus.NewRegistry()
	o.metrics = agent.NewMetrics(reg)
	// Facts outlive a reload too: facts_interval bounds their age.
	o.facts = &agent.FactsCache{Metrics: o.metrics, Load: func(ctx context.Context) (map[string]any, []string, error) {
		return facts.Load(ctx, facts.Options{})
	}}
	if cfg.MonitorPort > 0 {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", cfg.MonitorPort))
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("%s: monitor_port: %w", o.config, err)}
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		fmt.Fprintf(cmd.ErrOrStderr(), "ccm agent: Prometheus metrics on http://%s/metrics\n", ln.Addr())
	}
	// One plugin host for the agent's life: reloads do not recompile.
	plugins, err := newPluginHost()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer plugins.Close(context.Background())
	for {
		err := o.serve(cmd, cfg, plugins, reload)
		if !errors.Is(err, agent.ErrReload) {
			return err
		}
		next, err := o.loadConfig()
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "ccm agent: SIGHUP: %v; keeping the running configuration\n", err)
			continue
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "ccm agent: SIGHUP: %s reloaded\n", o.config)
		cfg = next
	}
}

func (o *agentOptions) serve(cmd *cobra.Command, cfg *agent.Config, plugins *host.Host, reload <-chan struct{}) error {
	var err error
	stderr := cmd.ErrOrStderr()
	// register_when_stable and registrations() (registration.go).
	reg := &regHooks{context: cfg.NatsContext, stream: cfg.RegistrationStream, destination: cfg.Registration}
	if cfg.Registration != "" && o.noNATS {
		fmt.Fprintf(stderr, "ccm: warning: %s: registration: %s needs NATS; with --no-nats register_when_stable entries are not published\n", o.config, cfg.Registration)
		reg.destination = ""
	}
	if o.noNATS {
		reg.err = errors.New("ccm agent runs with --no-nats")
	}
	defer reg.close()
	node := o.node
	if node == "" {
		node = cfg.Node
	}
	if node == "" {
		if node, err = os.Hostname(); err != nil {
			return &exitError{exitUsage, fmt.Errorf("node identity: %w; set node: in %s or --node", err, o.config)}
		}
	}
	if strings.ContainsAny(node, ".*> \t") {
		return &exitError{exitUsage, fmt.Errorf("node identity %q: it is a NATS subject token, so it may not contain '.', '*', '>' or spaces; set node: in %s or --node", node, o.config)}
	}
	var grants trust.Chain
	if cfg.Grants != "" {
		gsrc, err := os.ReadFile(cfg.Grants)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("%s: grants: %w", o.config, err)}
		}
		g, err := trust.ParseGrant(gsrc)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("%s: grants %s: %w", o.config, cfg.Grants, err)}
		}
		grants = trust.Chain{g}
	}
	var policy bundle.Policy
	if cfg.TrustedKeys != "" {
		keys, err := bundle.LoadTrusted(cfg.TrustedKeys)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("%s: trusted_keys: %w", o.config, err)}
		}
		policy = bundle.Policy{Trusted: keys, RequireSignature: true}
	}
	ctx := cmd.Context() // ended by SIGINT and SIGTERM (signals.go)

	a := &agent.Agent{
		Node:      node,
		Manifests: cfg.Manifests,
		Interval:  cfg.IntervalDuration,
		Jitter:    cfg.JitterDuration,
		Metrics:   o.metrics,
		QueueSize: cfg.ResultsQueue,
		// https manifests are polled for changes (conditional GETs).
		PollInterval: cfg.PollDuration,
		Log: func(format string, args ...any) {
			fmt.Fprintf(stderr, "ccm agent: "+format+"\n", args...)
		},
	}
	if !o.noNATS {
		nc, js, err := agentConnect(cfg.NatsContext, stderr)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		defer nc.Close()
		reg.nc, reg.js = nc, js
		a.Conn = nc
		if cfg.PublishResults() {
			a.JS = js
			a.HeartbeatEvery = cfg.HeartbeatDuration
		}
	}

	out := cmd.OutOrStdout()
	var mu sync.Mutex // one run at a time shares the printer
	digests := map[string]string{}
	a.Digest = func(m string) string {
		mu.Lock()
		defer mu.Unlock()
		return digests[m]
	}
	cached := map[string][]source.Fallback{}
	a.Cached = func(m string) []source.Fallback {
		mu.Lock()
		defer mu.Unlock()
		return cached[m]
	}
	lastGood := ""
	if cfg.UseLastGood() {
		lastGood = filepath.Join(cfg.CacheDir, "last-good")
	}
	o.facts.Every = cfg.FactsDuration
	run := func(ctx context.Context, manifest string, healthOnly bool) (*engine.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		// Facts are gathered again once older than facts_interval.
		fts, _, warnings, err := o.facts.Get(ctx)
		for _, w := range warnings {
			fmt.Fprintf(stderr, "ccm: warning: %s\n", w)
		}
		if err != nil {
			return nil, err
		}
		fetcher := source.New(source.Options{Context: cfg.NatsContext, Cache: cfg.CacheDir, Policy: policy, LastGood: lastGood,
			Warn: func(err error) { fmt.Fprintf(stderr, "ccm agent: warning: %v\n", err) }})
		defer fetcher.Close()
		delete(digests, manifest)
		delete(cached, manifest)
		defer func() { cached[manifest] = fetcher.Fallbacks() }()
		var external map[string]any
		if cfg.ExternalDataURL != "" {
			start := time.Now()
			var hsrc []byte
			var err error
			if source.IsRemote(cfg.ExternalDataURL) {
				// https, obj:// and kv:// data through the fetcher: its
				// last-good copy serves when the source is unreachable.
				hsrc, err = fetcher.Get(ctx, cfg.ExternalDataURL, data.MaxSourceSize)
			} else {
				hsrc, err = loadHieraSource(ctx, cfg.ExternalDataURL, fetcher)
			}
			o.metrics.Data(cfg.ExternalDataURL, time.Since(start), err)
			if err != nil {
				return nil, fmt.Errorf("external_data_url: %w", err)
			}
			resolved, warnings, err := data.ResolveDocument(hsrc, cfg.ExternalDataURL, fts, nil)
			for _, w := range warnings {
				fmt.Fprintf(stderr, "ccm: warning: %s\n", w)
			}
			if err != nil {
				return nil, fmt.Errorf("external_data_url: %w", err)
			}
			external = resolved
		}
		eng := engine.New(engine.Options{
			Plugins:         plugins,
			Facts:           fts,
			Environ:         data.Environ(nil),
			ExternalData:    external,
			Grants:          grants,
			Reporter:        newPrinter(out, useColor("auto", out)),
			Remote:          remoteHook(fetcher),
			KVGet:           kvGetHook(fetcher),
			Register:        reg.registerHook(),
			Registrations:   reg.lookup,
			HealthCheckOnly: healthOnly,
		})
		res, err := eng.Run(ctx, manifest)
		if source.IsRemote(manifest) {
			// The run's fetcher hands back the bundle the run used, without fetching again.
			if x, berr := fetcher.Bundle(ctx, manifest, ""); berr == nil {
				digests[manifest] = x.Digest
			}
		}
		return res, err
	}
	a.Run = func(ctx context.Context, m string) (*engine.Result, error) { return run(ctx, m, false) }
	a.Check = func(ctx context.Context, m string) (*engine.Result, error) { return run(ctx, m, true) }
	a.HealthInterval = cfg.HealthCheckDuration

	if o.once {
		failed := false
		for _, r := range a.Once(ctx, "once") {
			if !r.Successful {
				failed = true
			}
		}
		if n := a.Pending(); n > 0 {
			fmt.Fprintf(stderr, "ccm agent: %d results not published: NATS is not reachable\n", n)
		}
		if failed {
			return &exitError{code: exitFailed}
		}
		return nil
	}
	a.Reload = reload
	return a.Loop(ctx)
}

// agentConnect connects with the context's credentials, keeps trying while
// the server is down (at start too); the agent creates the results stream
// before its first publish.
func agentConnect(name string, stderr io.Writer) (*nats.Conn, jetstream.JetStream, error) {
	nctx, err := natsctx.Resolve(name)
	if err != nil {
		return nil, nil, err
	}
	opts, err := nctx.Options()
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts,
		nats.Name("ccm agent"),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				fmt.Fprintf(stderr, "ccm agent: NATS disconnected: %v; reconnecting\n", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			fmt.Fprintf(stderr, "ccm agent: NATS reconnected to %s\n", c.ConnectedUrlRedacted())
		}),
	)
	nc, err := nats.Connect(nctx.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("NATS context %s: %w", name, err)
	}
	var js jetstream.JetStream
	switch {
	case nctx.JSDomain != "":
		js, err = jetstream.NewWithDomain(nc, nctx.JSDomain)
	case nctx.JSAPIPrefix != "":
		js, err = jetstream.NewWithAPIPrefix(nc, nctx.JSAPIPrefix)
	default:
		js, err = jetstream.New(nc)
	}
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

func newFleetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "See the results the agents publish: status (one row per node) and watch (live)",
	}
	var context string
	cmd.PersistentFlags().StringVar(&context, "context", "", "NATS context `NAME` or absolute path of a context file (default $NATS_CONTEXT, else CCM)")

	var stale time.Duration
	var jsonOut bool
	status := &cobra.Command{
		Use:   "status",
		Short: "One row per node: its last run, bundle, changed and failed resources, age; nodes without a recent heartbeat or result marked stale",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nctx, err := natsctx.Resolve(context)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			nc, js, err := nctx.Connect()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer nc.Close()
			rows, err := agent.Latest(cmd.Context(), js)
			if err != nil {
				return &exitError{exitFailed, err}
			}
			seen, err := agent.LastSeen(cmd.Context(), js)
			if err != nil {
				return &exitError{exitFailed, err}
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tSTATE\tAGE\tMANIFEST\tBUNDLE\tCHANGED\tFAILED\tREASON")
			bad := false
			for _, r := range rows {
				age := time.Since(r.Started.Add(r.Duration))
				state := "ok"
				switch {
				case r.Error != "":
					state = "error"
				case !r.Successful:
					state = "failed"
				}
				// Stale: no heartbeat within --stale (none at all when the
				// node does not beat: then its last result counts).
				last := r.Started.Add(r.Duration)
				if t, ok := seen[r.Node]; ok && t.After(last) {
					last = t
				}
				if time.Since(last) > stale {
					state += ",stale"
				}
				if r.Source == "cache" {
					state += ",cache" // a source was unreachable: its last-good copy was applied
				}
				if state != "ok" {
					bad = true
				}
				changed, failed := "-", "-"
				if r.Summary != nil {
					changed, failed = fmt.Sprint(r.Summary.Changed), fmt.Sprint(r.Summary.Failed)
				}
				digest := r.Digest
				if len(digest) > 12 {
					digest = digest[:12]
				}
				if digest == "" {
					digest = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", terminalSafe(r.Node), state, age.Round(time.Second), terminalSafe(r.Manifest), digest, changed, failed, terminalSafe(r.Reason))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if bad {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	status.Flags().DurationVar(&stale, "stale", 15*time.Minute, "a node whose last result is older than this is stale")
	status.Flags().BoolVar(&jsonOut, "json", false, "print the rows as JSON")

	watch := &cobra.Command{
		Use:   "watch",
		Short: "Print every result as the agents publish it, until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nctx, err := natsctx.Resolve(context)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			nc, _, err := nctx.Connect()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer nc.Close()
			out := cmd.OutOrStdout()
			var mu sync.Mutex
			sub, err := nc.Subscribe(agent.ResultPrefix+">", func(m *nats.Msg) {
				var r agent.Result
				if json.Unmarshal(m.Data, &r) != nil {
					return
				}
				line := fmt.Sprintf("%s %s %s (%s)", r.Started.Format(time.RFC3339), terminalSafe(r.Node), terminalSafe(r.Manifest), terminalSafe(r.Reason))
				switch {
				case r.Error != "":
					line += ": nothing applied: " + terminalSafe(r.Error)
				case r.Summary != nil:
					line += fmt.Sprintf(": %d changed, %d failed", r.Summary.Changed, r.Summary.Failed)
				}
				for _, c := range r.Cached {
					line += fmt.Sprintf("; %s unreachable, its last-good copy (%s old) used", terminalSafe(c.Name), c.Age.Round(time.Second))
				}
				mu.Lock()
				fmt.Fprintln(out, line)
				mu.Unlock()
			})
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer sub.Unsubscribe()
			if err := nc.Flush(); err != nil {
				return &exitError{exitUsage, err}
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.AddCommand(status, watch)
	return cmd
}
