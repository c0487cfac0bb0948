package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/fstree"
	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// request builds the row's request with DIR replaced by dir.
func request(row execRow, dir string) abi.Request {
	p := map[string]any{}
	for k, v := range row.props {
		p[k] = subst(v, dir)
	}
	name, _ := p["name"].(string)
	delete(p, "name")
	return abi.Request{Type: "exec", Name: name, Properties: p, Provider: row.provider, Refresh: row.refresh, WorkingDir: dir}
}

func subst(v any, dir string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "DIR", dir)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = subst(e, dir)
		}
		return out
	}
	return v
}

// usesMarker reports whether the row's command touches DIR/ran when it runs.
func usesMarker(row execRow) bool {
	c, _ := row.props["command"].(string)
	if c == "" {
		c, _ = row.props["name"].(string)
	}
	return strings.Contains(c, "ran")
}

func writeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantMissing(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("%s exists: a guard ran that must not", p)
	}
}

func wantMessage(t *testing.T, res abi.Result, msg string) {
	t.Helper()
	if !slices.Contains(res.Messages, msg) {
		t.Fatalf("messages %q lack %q", res.Messages, msg)
	}
}

func wantError(t *testing.T, got, want string) {
	t.Helper()
	if want == "" && got != "" {
		t.Fatalf("unexpected error: %s", got)
	}
	if !strings.Contains(got, want) {
		t.Fatalf("error %q does not contain %q", got, want)
	}
}

// wantLogs asserts the info log lines are exactly these, in order.
// wantLogs checks the logged lines. The plugin logs its output in one call
// (the host splits it into lines), so messages are split here too.
func wantLogs(t *testing.T, h *fakehost.Host, want ...string) {
	t.Helper()
	var got []string
	for _, l := range h.Logs() {
		if l.Level != "info" {
			t.Fatalf("log level %q, want info", l.Level)
		}
		got = append(got, strings.Split(l.Message, "\n")...)
	}
	// One ccm_log call for the whole output; the host hands it on a line
	// at a time (its log budget), so Logs has a line each.
	if n := h.Count(abi.CallLog); n > 1 {
		t.Fatalf("%d log calls, want one for the whole output", n)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("logged %q, want %q", got, want)
	}
}

func noMutation(t *testing.T, dir string, fn func()) {
	t.Helper()
	before := fstree.Describe(t, dir)
	fn()
	if after := fstree.Describe(t, dir); after != before {
		t.Fatalf("noop changed the tree:\n%s\nwas\n%s", after, before)
	}
}

// probeRecorder wraps the fake host to record every exec request.
type probeRecorder struct {
	*fakehost.Host
	probes []bool
	reqs   []abi.ExecRequest
}

func (p *probeRecorder) Exec(req abi.ExecRequest) (abi.ExecResponse, error) {
	p.probes = append(p.probes, req.Probe)
	p.reqs = append(p.reqs, req)
	return p.Host.Exec(req)
}

// info is the plugin's own description: the host applies its capabilities
// and guards to every host call of a test, as in ccm.
var info = (&execType{}).Info()
