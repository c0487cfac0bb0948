package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ccm-dev/ccm/runtime/natsctx"
	"github.com/ccm-dev/ccm/runtime/registration"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/goccy/go-yaml"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// newRegistrationCommand is CCM's `ccm registration` (docs/registration.md).
func newRegistrationCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "registration",
		Aliases: []string{"reg", "r"},
		Short:   "Node registration: entries stable resources announce over NATS JetStream (init, create, query, watch, rm)",
	}
	var nctx string
	cmd.PersistentFlags().StringVar(&nctx, "context", "", "NATS context `NAME` or absolute path of a context file (default $NATS_CONTEXT, else CCM)")
	connect := func(cmd *cobra.Command) (*nats.Conn, jetstream.JetStream, error) {
		c, err := natsctx.Resolve(nctx)
		if err != nil {
			return nil, nil, &exitError{exitUsage, err}
		}
		nc, js, err := c.Connect()
		if err != nil {
			return nil, nil, &exitError{exitUsage, err}
		}
		return nc, js, nil
	}
	stream := func(c *cobra.Command) *string {
		s := new(string)
		c.Flags().StringVarP(s, "registration", "R", registration.DefaultStream, "the NATS `STREAM` holding registration data")
		return s
	}
	cmd.AddCommand(registrationInit(connect, stream), registrationCreate(connect, stream), registrationQuery(connect, stream), registrationWatch(connect, stream), registrationRm(connect, stream))
	return cmd
}

type connectFunc func(*cobra.Command) (*nats.Conn, jetstream.JetStream, error)

// userLog prints CCM's user log line: level, message, key=value pairs.
func userLog(w io.Writer, level, msg string, kv ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", time.Now().Format("15:04:05"), level, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	fmt.Fprintln(w, b.String())
}

func registrationInit(connect connectFunc, stream func(*cobra.Command) *string) *cobra.Command {
	var replicas int
	var maxAge time.Duration
	c := &cobra.Command{
		Use:   "init",
		Short: "Create or update the registration JetStream stream (CCM's configuration, plus AllowDirect for lookups)",
		Args:  cobra.NoArgs,
	}
	name := stream(c)
	c.Flags().IntVar(&replicas, "replicas", 1, "number of stream replicas (1-5)")
	c.Flags().DurationVar(&maxAge, "max-age", registration.DefaultMaxAge, "maximum age of entries without their own ttl, and how long removal markers are kept; make it longer than the agents' interval")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if replicas < 1 || replicas > 5 {
			return &exitError{exitUsage, errors.New("replicas must be between 1 and 5")}
		}
		nc, js, err := connect(cmd)
		if err != nil {
			return err
		}
		defer nc.Close()
		info, err := registration.Init(cmd.Context(), js, *name, replicas, maxAge)
		if err != nil {
			return &exitError{exitFailed, err}
		}
		userLog(cmd.OutOrStdout(), "INF", "Registration stream ready", "stream", info.Config.Name, "subjects", info.Config.Subjects, "replicas", info.Config.Replicas, "allow_direct", info.Config.AllowDirect)
		return nil
	}
	return c
}

// entryFlags are create's and rm's identifying flags.
type entryFlags struct {
	cluster, service, protocol, address string
	port                                int64
}

func (f *entryFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.cluster, "cluster", "", "the cluster name (required)")
	c.Flags().StringVar(&f.service, "service", "", "the service name (required)")
	c.Flags().StringVar(&f.protocol, "protocol", "", "the protocol name (required)")
	c.Flags().StringVar(&f.address, "address", "", "the IP address (required)")
	c.Flags().Int64Var(&f.port, "port", 0, "the port number (required)")
	for _, n := range []string{"cluster", "service", "protocol", "address", "port"} {
		_ = c.MarkFlagRequired(n)
	}
}

func (f *entryFlags) entry() *registration.Entry {
	return &registration.Entry{Cluster: f.cluster, Service: f.service, Protocol: f.protocol, Address: f.address, Port: f.port}
}

func registrationCreate(connect connectFunc, stream func(*cobra.Command) *string) *cobra.Command {
	var f entryFlags
	var priority int64
	var ttl string
	var annotations []string
	c := &cobra.Command{
		Use:     "create",
		Aliases: []string{"c"},
		Short:   "Publish a registration entry to the JetStream stream",
		Args:    cobra.NoArgs,
	}
	name := stream(c)
	f.add(c)
	c.Flags().Int64Var(&priority, "priority", 100, "the priority (1-255, lower is preferred)")
	c.Flags().StringVar(&ttl, "ttl", "30s", "time to live for the entry: a duration (30s, 10m, 1d) or never")
	c.Flags().StringArrayVarP(&annotations, "annotation", "A", nil, "an annotation `KEY=VALUE`; repeat for more")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		e := f.entry()
		e.Priority = priority
		var err error
		if e.TTL, err = registration.ParseTTL(ttl); err != nil {
			return &exitError{exitUsage, fmt.Errorf("invalid registration entry: %w", err)}
		}
		for _, a := range annotations {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return &exitError{exitUsage, fmt.Errorf("--annotation %q: want KEY=VALUE", a)}
			}
			if e.Annotations == nil {
				e.Annotations = map[string]string{}
			}
			e.Annotations[k] = v
		}
		if err := e.Validate(); err != nil {
			return &exitError{exitUsage, fmt.Errorf("invalid registration entry: %w", err)}
		}
		nc, js, err := connect(cmd)
		if err != nil {
			return err
		}
		defer nc.Close()
		p := &registration.Publisher{NC: nc, JS: js, Stream: *name}
		if err := p.Publish(cmd.Context(), e); err != nil {
			return &exitError{exitFailed, err}
		}
		userLog(cmd.OutOrStdout(), "INF", "Registration entry created", "cluster", e.Cluster, "service", e.Service, "protocol", e.Protocol, "address", e.Address, "port", e.Port, "priority", e.Priority)
		return nil
	}
	return c
}

func filterArgs(c *cobra.Command) {
	c.Use += " [CLUSTER [PROTOCOL [SERVICE [ADDRESS]]]]"
	c.Args = cobra.MaximumNArgs(4)
}

func filterOf(args []string) [4]string {
	f := [4]string{"*", "*", "*", "*"}
	copy(f[:], args)
	return f
}

// entryView is an entry in CCM's JSON/YAML key names.
type entryView struct {
	Cluster     string            `json:"cluster" yaml:"cluster"`
	Service     string            `json:"service" yaml:"service"`
	Protocol    string            `json:"protocol" yaml:"protocol"`
	Address     string            `json:"address" yaml:"address"`
	Port        *int64            `json:"port" yaml:"port"`
	Priority    int64             `json:"priority" yaml:"priority"`
	Annotations map[string]string `json:"annotations,omitempty" yaml:"annotations,omitempty"`
	TTL         string            `json:"ttl,omitempty" yaml:"ttl,omitempty"`
}

func view(e *registration.Entry) entryView {
	v := entryView{Cluster: e.Cluster, Service: e.Service, Protocol: e.Protocol, Address: e.Address, Priority: e.Priority, Annotations: e.Annotations, TTL: e.TTL}
	if e.Port != 0 {
		p := e.Port
		v.Port = &p
	}
	return v
}

func registrationQuery(connect connectFunc, stream func(*cobra.Command) *string) *cobra.Command {
	var jsonOut, yamlOut bool
	var promSD string
	c := &cobra.Command{
		Use:     "query",
		Aliases: []string{"q"},
		Short:   "Query the registration store (* or an omitted argument matches everything)",
		Example: `  ccm registration query production http web
  ccm registration query production --json
  ccm registration query '*' '*' '*' '*' --prometheus-sd /etc/prometheus/sd/ccm.json`,
	}
	filterArgs(c)
	name := stream(c)
	c.Flags().BoolVar(&jsonOut, "json", false, "render results in JSON format")
	c.Flags().BoolVar(&yamlOut, "yaml", false, "render results in YAML format")
	c.Flags().StringVar(&promSD, "prometheus-sd", "", "write the results as Prometheus file_sd JSON to `FILE` (atomically: a temporary file renamed over it)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		nc, js, err := connect(cmd)
		if err != nil {
			return err
		}
		defer nc.Close()
		f := filterOf(args)
		ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
		defer cancel()
		res, info, err := registration.Lookup(ctx, js, *name, f[0], f[1], f[2], f[3])
		if err != nil {
			return &exitError{exitFailed, err}
		}
		if info.Note != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "ccm: warning: %s\n", info.Note)
		}
		out := cmd.OutOrStdout()
		if promSD != "" {
			sd, err := res.PrometheusFileSD()
			if err != nil {
				return &exitError{exitFailed, err}
			}
			if err := writeAtomic(promSD, []byte(sd+"\n")); err != nil {
				return &exitError{exitFailed, fmt.Errorf("--prometheus-sd: %w", err)}
			}
			return nil
		}
		views := make([]entryView, len(res))
		for i, e := range res {
			views[i] = view(e)
		}
		switch {
		case jsonOut:
			j, err := json.MarshalIndent(views, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(out, string(j))
			return nil
		case yamlOut:
			y, err := yaml.Marshal(views)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, string(y))
			return nil
		}
		if len(res) == 0 {
			fmt.Fprintln(out, "No results found")
			return nil
		}
		sort.SliceStable(res, func(i, j int) bool {
			if res[i].Cluster != res[j].Cluster {
				return res[i].Cluster < res[j].Cluster
			}
			if res[i].Protocol != res[j].Protocol {
				return res[i].Protocol < res[j].Protocol
			}
			return res[i].Service < res[j].Service
		})
		var cluster, service string
		for _, r := range res {
			if cluster != r.Cluster || service != r.Service {
				fmt.Fprintf(out, "Service: %s @ %s\n\n", r.Service, r.Cluster)
				cluster, service = r.Cluster, r.Service
			}
			fmt.Fprintf(out, "       Cluster: %s\n", r.Cluster)
			fmt.Fprintf(out, "      Protocol: %s\n", r.Protocol)
			fmt.Fprintf(out, "       Service: %s\n", r.Service)
			fmt.Fprintf(out, "       Address: %s\n", r.Address)
			if r.Port != 0 {
				fmt.Fprintf(out, "          Port: %d\n", r.Port)
			} else {
				fmt.Fprintf(out, "          Port: <nil>\n")
			}
			fmt.Fprintf(out, "      Priority: %d\n", r.Priority)
			if len(r.Annotations) > 0 {
				fmt.Fprintf(out, "   Annotations:\n")
				keys := make([]string, 0, len(r.Annotations))
				for k := range r.Annotations {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(out, "                %s: %s\n", k, r.Annotations[k])
				}
			}
			fmt.Fprintln(out)
		}
		return nil
	}
	return c
}

// writeAtomic writes b to path through a temporary file in its directory
// renamed over it, so Prometheus never reads half a file.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) //nolint:errcheck // gone after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func registrationWatch(connect connectFunc, stream func(*cobra.Command) *string) *cobra.Command {
	var jsonOut bool
	c := &cobra.Command{
		Use:   "watch",
		Short: "Watch registrations change in real time: the current entries, then every update and removal, until interrupted",
	}
	filterArgs(c)
	name := stream(c)
	c.Flags().BoolVar(&jsonOut, "json", false, "print each event as a JSON object, one per line")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		nc, js, err := connect(cmd)
		if err != nil {
			return err
		}
		defer nc.Close()
		f := filterOf(args)
		events, err := registration.Watch(cmd.Context(), js, *name, f[0], f[1], f[2], f[3], func(s string) {
			fmt.Fprintf(cmd.ErrOrStderr(), "ccm: warning: %s\n", s)
		})
		if err != nil {
			return &exitError{exitFailed, err}
		}
		out := cmd.OutOrStdout()
		enc := json.NewEncoder(out)
		for ev := range events {
			r := ev.Entry
			switch {
			case jsonOut:
				if err := enc.Encode(ev); err != nil {
					return err
				}
			case ev.Action == "remove":
				userLog(out, "WRN", "Removed entry", "cluster", r.Cluster, "service", r.Service, "protocol", r.Protocol, "address", r.Address, "reason", ev.Reason)
			case r.TTL != "":
				userLog(out, "INF", "Updated entry", "cluster", r.Cluster, "service", r.Service, "protocol", r.Protocol, "address", r.Address, "port", r.Port, "ttl", r.TTL)
			default:
				userLog(out, "INF", "Updated entry", "cluster", r.Cluster, "service", r.Service, "protocol", r.Protocol, "address", r.Address, "port", r.Port)
			}
		}
		return nil
	}
	return c
}

func registrationRm(connect connectFunc, stream func(*cobra.Command) *string) *cobra.Command {
	var f entryFlags
	var force bool
	c := &cobra.Command{
		Use:     "rm",
		Aliases: []string{"delete"},
		Short:   "Remove a registration entry (purge its subject)",
		Args:    cobra.NoArgs,
	}
	name := stream(c)
	f.add(c)
	c.Flags().BoolVar(&force, "force", false, "skip the confirmation prompt")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		e := f.entry()
		e.Priority = 1
		if err := e.Validate(); err != nil {
			return &exitError{exitUsage, fmt.Errorf("invalid registration entry: %w", err)}
		}
		if !force {
			if _, err := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS); err != nil {
				return &exitError{exitUsage, errors.New("rm asks for confirmation and stdin is not a terminal; add --force")}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "? Remove registration entry %s/%s/%s at %s:%d? (y/N) ", e.Cluster, e.Service, e.Protocol, e.Address, e.Port)
			line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				return nil
			}
		}
		nc, js, err := connect(cmd)
		if err != nil {
			return err
		}
		defer nc.Close()
		if err := registration.Remove(cmd.Context(), js, *name, e); err != nil {
			return &exitError{exitFailed, err}
		}
		userLog(cmd.OutOrStdout(), "INF", "Registration entry removed", "cluster", e.Cluster, "service", e.Service, "protocol", e.Protocol, "address", e.Address, "port", e.Port)
		return nil
	}
	return c
}

// regHooks are the engine's Register and Registrations
// (docs/registration.md): a NATS connection made on first use from the
// context, or the agent's.
type regHooks struct {
	context     string // NATS context name, "" for the default
	stream      string
	destination string // "", registration.DestinationNATS or DestinationJetStream

	mu  sync.Mutex
	nc  *nats.Conn
	js  jetstream.JetStream
	own bool // nc was opened here and is closed by close
	err error
}

// lookupTimeout bounds one registrations() call.
const lookupTimeout = 10 * time.Second

func (h *regHooks) conn() (jetstream.JetStream, *nats.Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.js != nil || h.err != nil {
		return h.js, h.nc, h.err
	}
	c, err := natsctx.Resolve(h.context)
	if err == nil {
		h.nc, h.js, err = c.Connect()
	}
	if err != nil {
		// Once per run: every later call fails the same way at once.
		h.err = fmt.Errorf("NATS is unreachable: %w", err)
		return nil, nil, h.err
	}
	h.own = true
	return h.js, h.nc, nil
}

func (h *regHooks) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.own && h.nc != nil {
		h.nc.Close()
	}
}

func (h *regHooks) grantTarget() string { return "nats:registration/" + h.stream }

func (h *regHooks) allowed(grants trust.Chain) error {
	if t := h.grantTarget(); !grants.Allows(trust.Net, t) {
		return fmt.Errorf("refused: the scope's grants do not allow net %q; add it to the apply's grants (net: [%q])", t, t)
	}
	return nil
}

// lookup is engine.Options.Registrations.
func (h *regHooks) lookup(ctx context.Context, cluster, protocol, service, address string, grants trust.Chain) (any, error) {
	if err := h.allowed(grants); err != nil {
		return nil, err
	}
	js, _, err := h.conn()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	res, _, err := registration.Lookup(ctx, js, h.stream, cluster, protocol, service, address)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("no answer from stream %s within %s: %w", h.stream, lookupTimeout, err)
	}
	return res, err
}

// register is engine.Options.Register.
func (h *regHooks) register(ctx context.Context, raw map[string]any, grants trust.Chain) (string, error) {
	e, err := registration.FromMap(raw)
	if err != nil {
		return "", err
	}
	if err := e.Validate(); err != nil {
		return "", err
	}
	if err := h.allowed(grants); err != nil {
		return "", err
	}
	js, nc, err := h.conn()
	if err != nil {
		return "", err
	}
	p := &registration.Publisher{NC: nc, Stream: h.stream}
	if h.destination == registration.DestinationJetStream {
		p.JS = js
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	if err := p.Publish(ctx, e); err != nil {
		return "", err
	}
	desc := fmt.Sprintf("%s/%s/%s %s", e.Cluster, e.Service, e.Protocol, e.Address)
	if e.Port != 0 {
		desc += fmt.Sprintf(":%d", e.Port)
	}
	if e.TTL != "" {
		desc += " ttl " + e.TTL
	}
	return desc + " on " + h.destination, nil
}

// regFlags are apply's registration flags: CCM's --registration (-R)
// names the stream registrations() reads; ours, --register, publishes
// register_when_stable entries (CCM's apply never does, only its agent).
type regFlags struct {
	stream      string
	destination string
}

func (r *regFlags) addFlags(f *pflag.FlagSet) {
	f.StringVarP(&r.stream, "registration", "R", registration.DefaultStream, "the NATS `STREAM` holding registration data, for registrations() and --register")
	f.StringVar(&r.destination, "register", "", "publish register_when_stable entries of stable resources: `jetstream` (to the stream) or nats (core NATS, best effort); default: not published")
}

func (r *regFlags) hooks(natsContext string) (*regHooks, error) {
	switch r.destination {
	case "", registration.DestinationNATS, registration.DestinationJetStream:
	default:
		return nil, fmt.Errorf("--register %q: want jetstream or nats", r.destination)
	}
	return &regHooks{context: natsContext, stream: r.stream, destination: r.destination}, nil
}

// registerHook is engine.Options.Register, nil without a destination.
func (h *regHooks) registerHook() func(context.Context, map[string]any, trust.Chain) (string, error) {
	if h.destination == "" {
		return nil
	}
	return h.register
}
