package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"go.yaml.in/yaml/v3"
)

type factsOptions struct {
	yaml      bool
	factKV    []string
	factsFile string
}

func newFactsCommand() *cobra.Command {
	o := &factsOptions{}
	cmd := &cobra.Command{
		Use:   "facts [QUERY]",
		Short: "Print the facts manifests see, or one of them",
		Long: `Facts prints every fact a manifest sees as Facts: the system families (host,
network, partition, cpu, memory, user), then custom facts from /etc/choria/ccm/
and $XDG_CONFIG_HOME/choria/ccm/ (facts.json, facts.yaml, facts.d/*.json|*.yaml),
then --facts FILE, then --fact KEY=VALUE, each merged over the last.

QUERY is a GJSON path; a string result prints bare, anything else as JSON (YAML
with --yaml). CCM_FACTS_DIRS (a ':'-separated list, empty for none) replaces the
custom facts directories.`,
		Example: `  # everything, as JSON
  ccm facts

  # one value
  ccm facts host.info.platformFamily

  # the addresses of eth0, as YAML
  ccm facts 'network.interfaces.#(name=="eth0").addrs' --yaml

  # what a run with overrides would see
  ccm facts env --fact env=prod`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := ""
			if len(args) == 1 {
				query = args[0]
			}
			return o.run(cmd, query)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.yaml, "yaml", false, "print YAML instead of JSON")
	f.StringArrayVar(&o.factKV, "fact", nil, "extra fact `KEY=VALUE` (dotted keys nest; repeatable; wins over --facts)")
	f.StringVar(&o.factsFile, "facts", "", "YAML/JSON `FILE` of extra facts")
	return cmd
}

func (o *factsOptions) run(cmd *cobra.Command, query string) error {
	fts, warnings, err := facts.Load(cmd.Context(), facts.Options{FactsFile: o.factsFile, Facts: o.factKV})
	for _, w := range warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "ccm: warning: %s\n", w)
	}
	if err != nil {
		return &exitError{exitUsage, err}
	}
	var v any = fts
	if query != "" {
		b, err := json.Marshal(fts)
		if err != nil {
			return &exitError{exitFailed, fmt.Errorf("encode facts: %w", err)}
		}
		r := gjson.GetBytes(b, query)
		if !r.Exists() {
			return &exitError{exitFailed, fmt.Errorf("no fact matches %q; run ccm facts to see them all", query)}
		}
		if r.Type == gjson.String && !o.yaml {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), r.Str)
			return err
		}
		if v, err = decodeJSON(r.Raw); err != nil {
			return &exitError{exitFailed, fmt.Errorf("decode the value of %q: %w", query, err)}
		}
	}
	return printValue(cmd.OutOrStdout(), v, o.yaml)
}

// decodeJSON decodes a GJSON result keeping integers integers, so that
// --yaml prints 25275953152 rather than 2.5275953152e+10.
func decodeJSON(raw string) (any, error) {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}

// printValue writes v as indented JSON, or YAML.
func printValue(w io.Writer, v any, asYAML bool) error {
	if asYAML {
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode facts as yaml: %w", err)
		}
		return enc.Close()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
