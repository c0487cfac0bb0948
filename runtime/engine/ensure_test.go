package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
)

func ensure(t *testing.T, f *fakePlugins, ss *session.Session, mod func(*Options), typ string, props map[string]any) (*session.Event, error) {
	t.Helper()
	opts := Options{Plugins: f, Session: ss, Facts: map[string]any{"host": map[string]any{"info": map[string]any{"hostname": "h1"}}},
		ExternalData: map[string]any{"greeting": "hi"}}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return New(opts).Ensure(ctx, EnsureRequest{Type: typ, Properties: props, Dir: t.TempDir()})
}

func TestEnsureOutcomes(t *testing.T) {
	prior := func() *session.Session {
		ss := session.New()
		changed := session.NewEvent("mark", "dep", "d")
		changed.Changed = true
		ss.Record(changed)
		failed := session.NewEvent("mark", "broken", "")
		failed.Fail("boom")
		ss.Record(failed)
		return ss
	}
	for _, tc := range []struct {
		name    string
		props   map[string]any
		noop    bool
		outcome string
		check   func(t *testing.T, ev *session.Event, f *fakePlugins)
	}{
		{name: "stable", props: map[string]any{"name": "a"}, outcome: "stable"},
		{name: "changed", props: map[string]any{"name": "a", "changed": true}, outcome: "changed"},
		{name: "failed", props: map[string]any{"name": "a", "fail": "nope"}, outcome: "failed"},
		{name: "templates in name and properties", props: map[string]any{"name": "{{ Data.greeting }}-{{ Facts.host.info.hostname }}", "value": "{{ Data.greeting }}", "later": "{{ Data.greeting }}!"}, outcome: "stable",
			check: func(t *testing.T, ev *session.Event, f *fakePlugins) {
				c, ok := f.call("hi-h1")
				if !ok || c.req.Properties["value"] != "hi" || c.req.Properties["later"] != "hi!" {
					t.Fatalf("call = %+v, %v", c.req, ok)
				}
			}},
		{name: "control if false", props: map[string]any{"name": "a", "control": map[string]any{"if": `Data.greeting == "no"`}}, outcome: "skipped"},
		{name: "control unless true", props: map[string]any{"name": "a", "control": map[string]any{"unless": `Data.greeting == "hi"`}}, outcome: "skipped"},
		{name: "require met by alias", props: map[string]any{"name": "a", "require": []any{"mark#d"}}, outcome: "stable"},
		{name: "require failed", props: map[string]any{"name": "a", "require": []any{"mark#broken"}}, outcome: "skipped",
			check: func(t *testing.T, ev *session.Event, _ *fakePlugins) {
				if len(ev.UnmetRequirements) != 1 || ev.UnmetRequirements[0] != "mark#broken" {
					t.Fatalf("unmet = %v", ev.UnmetRequirements)
				}
			}},
		{name: "require unknown", props: map[string]any{"name": "a", "require": []any{"mark#nope"}}, outcome: "failed"},
		{name: "subscribe fires", props: map[string]any{"name": "a", "subscribe": []any{"mark#dep"}}, outcome: "refreshed"},
		{name: "subscribe unknown", props: map[string]any{"name": "a", "subscribe": []any{"mark#nope"}}, outcome: "failed",
			check: func(t *testing.T, ev *session.Event, _ *fakePlugins) {
				if !strings.Contains(strings.Join(ev.Error, ""), "unknown subscription mark#nope") {
					t.Fatalf("errors = %v", ev.Error)
				}
			}},
		{name: "health check", props: map[string]any{"name": "a", "health_checks": []any{map[string]any{"command": "/bin/check {{ Data.greeting }}", "tries": 2}}}, outcome: "stable",
			check: func(t *testing.T, ev *session.Event, f *fakePlugins) {
				if len(ev.HealthCheck) != 1 || ev.HealthCheck[0].Status != session.HealthOK || len(f.execs) != 1 || f.execs[0].Argv[1] != "hi" {
					t.Fatalf("checks = %+v, execs = %+v", ev.HealthCheck, f.execs)
				}
			}},
		{name: "alias and provider", props: map[string]any{"name": "a", "alias": "x", "provider": "fake"}, outcome: "stable",
			check: func(t *testing.T, ev *session.Event, _ *fakePlugins) {
				if ev.Alias != "x" || ev.Provider != "fake" || ev.Manifest != "" {
					t.Fatalf("event = %+v", ev)
				}
			}},
		{name: "noop", props: map[string]any{"name": "a", "changed": true}, noop: true, outcome: "changed",
			check: func(t *testing.T, ev *session.Event, _ *fakePlugins) {
				if !ev.Noop || ev.NoopMessage == "" {
					t.Fatalf("event = %+v", ev)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePlugins{}
			ss := prior()
			ev, err := ensure(t, f, ss, func(o *Options) { o.Noop = tc.noop }, "mark", tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Outcome() != tc.outcome {
				t.Fatalf("outcome = %s, want %s; event %+v", ev.Outcome(), tc.outcome, ev)
			}
			if latest, _ := ss.Latest(ev.Ref()); latest != ev {
				t.Fatal("event not recorded in the session")
			}
			if tc.check != nil {
				tc.check(t, ev, f)
			}
		})
	}
}

func TestEnsureInvalid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typ   string
		props map[string]any
		want  string
	}{
		{"no type", "", map[string]any{"name": "a"}, "type is required"},
		{"apply", "apply", map[string]any{"name": "a"}, "use ccm apply"},
		{"no properties", "mark", nil, "properties are required"},
		{"no name", "mark", map[string]any{"ensure": "present"}, "needs a non-empty name"},
		{"unknown type", "nosuch", map[string]any{"name": "a"}, "nosuch#a: unknown resource type"},
		{"unknown property", "mark", map[string]any{"name": "a", "colour": "red"}, "mark#a: unknown property colour"},
		{"bad require", "mark", map[string]any{"name": "a", "require": "mark#b"}, "must be a list"},
		{"bad control", "mark", map[string]any{"name": "a", "control": map[string]any{"when": "true"}}, "when"},
		{"self require", "mark", map[string]any{"name": "a", "require": []any{"mark#a"}}, "refers to the resource itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePlugins{}
			ev, err := ensure(t, f, nil, nil, tc.typ, tc.props)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), ensureFile) {
				t.Errorf("error leaks the in-memory file name: %v", err)
			}
			if ev != nil || len(f.calls) != 0 {
				t.Fatalf("something ran: %v %v", ev, f.calls)
			}
		})
	}
	_, err := ensure(t, &fakePlugins{}, nil, nil, "", nil)
	if !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("err = %v, want ErrInvalidRequest", err)
	}
}
