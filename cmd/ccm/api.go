package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// Protocol ids of ensure api pipe (docs/shell.md).
const (
	apiRequestProtocol  = "io.choria.ccm.v1.resource.ensure.request"
	apiResponseProtocol = "io.choria.ccm.v1.resource.ensure.response"
)

// maxAPIRequest caps the request read from stdin.
const maxAPIRequest = 16 << 20

// apiResponse has exactly one of Error and State.
type apiResponse struct {
	Protocol string         `json:"protocol"`
	Error    string         `json:"error,omitempty"`
	State    *session.Event `json:"state,omitempty"`
}

func newEnsureAPICommand(g *ensureGroup) *cobra.Command {
	api := &cobra.Command{
		Use:   "api",
		Short: "Programmatic access: ensure api pipe",
	}
	var (
		yamlOut, noYAML bool
		factsFile       string
		dataArgs        []string
	)
	pipe := &cobra.Command{
		Use:     "pipe",
		Aliases: []string{"piped"},
		Short:   "Apply one resource from a JSON or YAML request on stdin; print the response",
		Long: `Pipe reads one request from stdin (JSON when it starts with "{", else YAML):

  {"protocol": "` + apiRequestProtocol + `",
   "type": "file", "properties": {"name": "/tmp/x", "content": "hi\n", ...}}

applies it like ccm ensure and prints one response (JSON, or YAML with --yaml):
protocol ` + apiResponseProtocol + ` and either "error" (the request
was invalid; nothing ran) or "state" (the resource's TransactionEvent; a resource
that ran and failed has failed: true).

Properties are those of a manifest resource, common ones included (require,
subscribe, control, health_checks, alias, provider); unknown ones are an error.
Exit status: 0 not failed, 1 failed, 2 error response.`,
		Example: `  echo '{"protocol":"` + apiRequestProtocol + `","type":"exec","properties":{"name":"/bin/true"}}' | ccm ensure api pipe`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			resp, code := g.pipe(cmd, factsFile, dataArgs)
			if err := writeAPIResponse(out, resp, yamlOut && !noYAML); err != nil {
				return &exitError{exitFailed, err}
			}
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	f := pipe.Flags()
	f.BoolVar(&yamlOut, "yaml", false, "print the response as YAML")
	f.BoolVar(&noYAML, "no-yaml", false, "print the response as JSON (the default)")
	f.StringVar(&factsFile, "facts", "", "YAML/JSON `FILE` of extra facts")
	f.StringArrayVar(&dataArgs, "data", nil, "data for templates: a YAML/JSON `FILE` or KEY=VALUE, merged over --hiera (repeatable)")
	api.AddCommand(pipe)
	return api
}

// pipe runs one request and returns the response and the exit status.
func (g *ensureGroup) pipe(cmd *cobra.Command, factsFile string, dataArgs []string) (apiResponse, int) {
	fail := func(err error) (apiResponse, int) {
		return apiResponse{Protocol: apiResponseProtocol, Error: err.Error()}, exitUsage
	}
	req, err := readAPIRequest(cmd.InOrStdin())
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Plugin log lines (logoutput) go to stderr: stdout is the response.
	errOut := cmd.ErrOrStderr()
	reporter := logsOnly{newPrinter(errOut, useColor(string(g.color), errOut))}
	_, hasRequire := req.Properties["require"]
	r, err := g.setup(ctx, errOut, reporter, hasRequire, true, factsFile, dataArgs)
	if err != nil {
		return fail(err)
	}
	defer r.close()
	ev, err := r.eng.Ensure(ctx, engine.EnsureRequest{Type: req.Type, Properties: req.Properties})
	if err != nil {
		return fail(err)
	}
	resp := apiResponse{Protocol: apiResponseProtocol, State: ev}
	if err := r.record(ev); err != nil {
		ev.Fail(err.Error())
	}
	return resp, eventExit(ev, g.detailed)
}

type apiRequest struct {
	Type       string
	Properties map[string]any
}

// readAPIRequest decodes the request strictly: the three keys, no others.
// JSON is decoded by the same YAML decoder as manifests (JSON is YAML), so
// numbers and strings come out as they would in a manifest.
func readAPIRequest(r io.Reader) (apiRequest, error) {
	var req apiRequest
	b, err := io.ReadAll(io.LimitReader(r, maxAPIRequest+1))
	if err != nil {
		return req, fmt.Errorf("reading the request from stdin: %w", err)
	}
	if len(b) > maxAPIRequest {
		return req, fmt.Errorf("request larger than %d MiB", maxAPIRequest>>20)
	}
	format := "YAML"
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		format = "JSON"
		if !json.Valid(trimmed) {
			var v any
			return req, fmt.Errorf("request: invalid JSON: %v", json.Unmarshal(trimmed, &v))
		}
	}
	v, err := manifest.DecodeValue(b, "request")
	if err != nil {
		return req, fmt.Errorf("request: invalid %s: %w", format, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return req, fmt.Errorf("request: want a %s map with protocol, type and properties, got %s", format, describe(v))
	}
	var unknown []string
	for k := range m {
		if k != "protocol" && k != "type" && k != "properties" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return req, fmt.Errorf("request: unknown keys %s; a request has protocol, type and properties", strings.Join(unknown, ", "))
	}
	if p, _ := m["protocol"].(string); p != apiRequestProtocol {
		return req, fmt.Errorf("request: protocol %s: want %s", describe(m["protocol"]), apiRequestProtocol)
	}
	typ, ok := m["type"].(string)
	if !ok || typ == "" {
		return req, errors.New("request: type is required: the resource type, such as file or package")
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		return req, fmt.Errorf("request: properties are required: a map with at least name, got %s", describe(m["properties"]))
	}
	return apiRequest{Type: typ, Properties: props}, nil
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// writeAPIResponse prints resp as indented JSON, or as YAML with the same
// keys in the same order (duration stays an integer of nanoseconds).
func writeAPIResponse(w io.Writer, resp apiResponse, asYAML bool) error {
	b, err := json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return err
	}
	if !asYAML {
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	out, err := jsonToYAML(b)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// jsonToYAML re-prints a JSON document as block-style YAML, keeping key
// order: JSON is YAML, so the node tree only needs its flow style cleared.
func jsonToYAML(b []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	var clear func(*yaml.Node)
	clear = func(n *yaml.Node) {
		n.Style &^= yaml.FlowStyle
		if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
			n.Style &^= yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			clear(c)
		}
	}
	clear(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}
