package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// statusPlugins records the Status call and logs a line through the caller.
type statusPlugins struct {
	fakePlugins
	caller trust.Caller
	req    abi.Request
	err    error
}

func (s *statusPlugins) Status(_ context.Context, c trust.Caller, req abi.Request) (abi.StatusResponse, error) {
	s.caller, s.req = c, req
	c.Log("warn", "looked")
	return abi.StatusResponse{FinalEnsure: "present"}, s.err
}

type logLines struct {
	nopReporter
	lines []string
}

func (l *logLines) Log(resource, level, message string) {
	l.lines = append(l.lines, resource+" "+level+" "+message)
}

// TestStatus: ccm status goes through the engine: the root scope's grants,
// read-only, the resource's name as its one property, logs to the
// Reporter, and errors that name the resource.
func TestStatus(t *testing.T) {
	grants := trust.Chain{trust.All()}
	f := &statusPlugins{}
	logs := &logLines{}
	e := New(Options{Plugins: f, Grants: grants, Reporter: logs})
	resp, err := e.Status(context.Background(), StatusRequest{Type: "mark", Name: "/x", Dir: "/wd"})
	if err != nil || resp.FinalEnsure != "present" {
		t.Fatalf("%+v, %v", resp, err)
	}
	c := f.caller
	if c.Mode != trust.ModeStatus || c.Resource != "mark#/x" || len(c.Grants) != 1 || c.Grants[0].FSRead[0] != "/**" {
		t.Fatalf("caller %+v", c)
	}
	if r := f.req; r.Type != "mark" || r.Name != "/x" || r.WorkingDir != "/wd" || r.Properties["name"] != "/x" || r.Noop || r.HealthCheckOnly {
		t.Fatalf("request %+v", r)
	}
	if len(logs.lines) != 1 || logs.lines[0] != "mark#/x warn looked" {
		t.Fatalf("logs %q", logs.lines)
	}

	if _, err := e.Status(context.Background(), StatusRequest{Type: "nosuch", Name: "x"}); !errors.Is(err, hostapi.ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
	f.err = errors.New("trap")
	if _, err := e.Status(context.Background(), StatusRequest{Type: "mark", Name: "y"}); err == nil || !strings.HasPrefix(err.Error(), "mark#y: trap") {
		t.Fatalf("failed call: %v", err)
	}
}

// TestRootScopeOnce: Run, Render and Ensure build their root scope from the
// same options (rootScope): noop, health-check-only and grants.
func TestRootScopeOnce(t *testing.T) {
	grants := trust.Chain{{FSRead: []string{"/**"}}}
	e := New(Options{Plugins: &fakePlugins{}, Noop: true, HealthCheckOnly: true, Grants: grants})
	m, err := e.rootScope(context.Background(), "dir/m.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	if !m.noop || !m.healthCheckOnly || len(m.grants) != 1 || !m.allowApply || !strings.HasSuffix(m.file, "/dir/m.yaml") || e.rootDir != m.dir {
		t.Fatalf("manifest root %+v", m)
	}
	en, err := e.rootScope(context.Background(), "dir", false)
	if err != nil {
		t.Fatal(err)
	}
	if !en.noop || !en.healthCheckOnly || len(en.grants) != 1 || en.allowApply || en.dir != m.dir || en.file != m.dir+"/"+ensureFile || e.rootDir != en.dir {
		t.Fatalf("ensure root %+v (manifest %+v)", en, m)
	}
	if m.mode() != trust.ModeHealthCheck {
		t.Fatalf("mode %v", m.mode())
	}
}

var _ Reporter = (*logLines)(nil)
