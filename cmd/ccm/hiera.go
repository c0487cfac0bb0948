package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
)

// hieraFactOptions are the fact flags shared by `hiera parse` and
// `hiera facts`.
type hieraFactOptions struct {
	factsFile   string
	envFacts    bool
	systemFacts bool // accepted for CCM's docs; system facts are always included
	query       string
	yaml        bool
}

func (o *hieraFactOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.factsFile, "facts", "", "YAML/JSON `FILE` of facts (wins over -E)")
	f.BoolVarP(&o.envFacts, "env-facts", "E", false, "use the process environment variables as facts (wins over system facts)")
	f.BoolVarP(&o.systemFacts, "system-facts", "S", false, "accepted for compatibility: system facts are always included")
	f.StringVar(&o.query, "query", "", "GJSON `PATH` to print instead of the whole result")
	f.BoolVar(&o.yaml, "yaml", false, "print YAML instead of JSON")
}

// load returns the facts: system (and custom) < -E < --facts < kv.
func (o *hieraFactOptions) load(cmd *cobra.Command, kv []string) (map[string]any, error) {
	base, err := loadFacts(cmd.Context(), cmd.ErrOrStderr(), facts.Options{})
	if err != nil {
		return nil, err
	}
	if o.envFacts {
		env := map[string]any{}
		for _, e := range os.Environ() {
			// The first "=" ends the name: values may contain more.
			if k, v, ok := strings.Cut(e, "="); ok && k != "" {
				env[k] = v
			}
		}
		base = data.Merge(base, env)
	}
	return facts.WithOverrides(base, o.factsFile, kv)
}

func newHieraCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hiera",
		Short: "Resolve Hiera data documents outside a manifest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newHieraParseCommand(), newHieraFactsCommand())
	return cmd
}

type hieraParseOptions struct {
	hieraFactOptions
	data      []string
	dataFile  string
	env       bool
	envPrefix string
	context   string // NATS context for kv:// (remote.go)
}

func newHieraParseCommand() *cobra.Command {
	o := &hieraParseOptions{}
	cmd := &cobra.Command{
		Use:     "parse INPUT [KEY=VALUE ...]",
		Aliases: []string{"resolve"},
		Short:   "Resolve a Hiera document against facts and print its data",
		Long: `Parse resolves a Hiera document (a YAML/JSON map with data, hierarchy and
overrides; a manifest works too) and prints the resulting data as JSON.

INPUT is a path, a file:// path, an http(s):// URL (user:pass@ gives basic
auth) or kv://BUCKET/KEY (NATS, see --context and docs/remote.md).
It may be omitted when $HIERA_INPUT is set; then every argument is a fact.

Facts, later winning: system and custom facts < -E < --facts < KEY=VALUE
arguments. Data overrides, --data-file then -D, are merged after resolution;
then the data annotations (@require, @validate) are checked.`,
		Example: `  # resolve for a production web host
  ccm hiera parse hiera.yaml env=prod hostname=web01

  # one value, with the environment as facts
  ccm hiera parse hiera.yaml -E --query log_level

  # shell variables: HIERA_LOG_LEVEL=TRACE ...
  eval "$(ccm hiera parse https://config.example.com/hiera.yaml --env)"

  # override a value, print YAML
  ccm hiera parse hiera.yaml -D log_level=DEBUG --yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			input, kv, err := hieraInput(args)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			return o.run(cmd, input, kv)
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringArrayVarP(&o.data, "data", "D", nil, "override data `KEY=VALUE` (a string; dotted keys nest; repeatable)")
	f.StringVar(&o.dataFile, "data-file", "", "YAML/JSON `FILE` of override data (-D wins over it)")
	f.StringVar(&o.context, "context", "", "NATS context `NAME` or absolute path of a context file, for kv:// (default $NATS_CONTEXT, else CCM)")
	f.BoolVar(&o.env, "env", false, "print PREFIX_KEY=value lines, sorted (non-scalars as JSON)")
	f.StringVar(&o.envPrefix, "env-prefix", "HIERA", "`PREFIX` of --env variable names")
	return cmd
}

// hieraInput splits parse's arguments into INPUT and facts. With
// $HIERA_INPUT set, a first argument holding "=" is a fact, not INPUT.
func hieraInput(args []string) (string, []string, error) {
	env := os.Getenv("HIERA_INPUT")
	if len(args) > 0 && (env == "" || !strings.Contains(args[0], "=")) {
		return args[0], args[1:], nil
	}
	if env == "" {
		return "", nil, errors.New("hiera parse needs INPUT (a path or http(s):// URL) or $HIERA_INPUT; see ccm hiera parse --help")
	}
	return env, args, nil
}

func (o *hieraParseOptions) run(cmd *cobra.Command, input string, kv []string) error {
	if o.env && o.yaml {
		return &exitError{exitUsage, errors.New("--env and --yaml cannot be combined; pick one output format")}
	}
	for _, d := range o.data {
		if !strings.Contains(d, "=") {
			return &exitError{exitUsage, fmt.Errorf("-D %q: expected KEY=VALUE; use --data-file for a file", d)}
		}
	}
	fts, err := o.load(cmd, kv)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	var layers []map[string]any
	if o.dataFile != "" {
		m, err := data.LoadFile(o.dataFile)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("--data-file: %w", err)}
		}
		layers = append(layers, m)
	}
	cli, err := data.ParseAssignments(o.data)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	layers = append(layers, cli)
	f := source.New(source.Options{Context: o.context}) // kv:// (remote.go)
	defer f.Close()
	out, err := resolveHiera(cmd.Context(), cmd.ErrOrStderr(), input, false, f, fts, layers...)
	if errors.Is(err, errHieraSource) {
		return &exitError{exitUsage, err}
	}
	if err != nil {
		return &exitError{exitFailed, err}
	}
	if o.env {
		v, err := queryValue(out, o.query)
		if err != nil {
			return &exitError{exitFailed, err}
		}
		return printEnv(cmd.OutOrStdout(), v, o.envPrefix)
	}
	return printQuery(cmd.OutOrStdout(), out, o.query, o.yaml)
}

func newHieraFactsCommand() *cobra.Command {
	o := &hieraFactOptions{}
	cmd := &cobra.Command{
		Use:   "facts [KEY=VALUE ...]",
		Short: "Print the facts hiera parse would resolve against",
		Long: `Facts prints the merged facts hiera parse uses, later winning: system and
custom facts < -E < --facts < KEY=VALUE arguments.`,
		Example: `  # what would env=prod see
  ccm hiera facts env=prod --query env

  # with the process environment
  ccm hiera facts -E --query HOME`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fts, err := o.load(cmd, args)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			return printQuery(cmd.OutOrStdout(), fts, o.query, o.yaml)
		},
	}
	o.register(cmd)
	return cmd
}

// queryValue returns the GJSON query's value in v, or v for "".
func queryValue(v map[string]any, query string) (any, error) {
	if query == "" {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the result: %w", err)
	}
	r := gjson.GetBytes(b, query)
	if !r.Exists() {
		return nil, fmt.Errorf("nothing matches --query %q; run without --query to see everything", query)
	}
	out, err := decodeJSON(r.Raw)
	if err != nil {
		return nil, fmt.Errorf("decode the value of %q: %w", query, err)
	}
	return out, nil
}

// printQuery prints the query's value like ccm facts does: a string bare
// unless --yaml, anything else as JSON or YAML.
func printQuery(w io.Writer, v map[string]any, query string, asYAML bool) error {
	out, err := queryValue(v, query)
	if err != nil {
		return &exitError{exitFailed, err}
	}
	if s, ok := out.(string); ok && query != "" && !asYAML {
		_, err := fmt.Fprintln(w, s)
		return err
	}
	return printValue(w, out, asYAML)
}

// printEnv writes PREFIX_KEY=value lines for v's top-level keys, sorted
// (CCM prints them in map order, which changes between runs).
func printEnv(w io.Writer, v any, prefix string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return &exitError{exitFailed, fmt.Errorf("--env needs a map of keys, the result is %T; change --query", v)}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		val, err := envValue(m[k])
		if err != nil {
			return &exitError{exitFailed, fmt.Errorf("--env: key %q: %w", k, err)}
		}
		fmt.Fprintf(&b, "%s_%s=%s\n", prefix, strings.ToUpper(k), val)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func envValue(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case map[string]any, []any:
		b, err := json.Marshal(t)
		return string(b), err
	}
	return fmt.Sprint(v), nil
}
