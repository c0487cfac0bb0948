package main

// End-to-end tests of honest modes (issue 11 item 6): --monitor-only says
// which resources it did not check, a health check whose program is missing
// fails at once, and --render keeps pre/post messages and honours --json.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

func TestHonestMonitorOnly(t *testing.T) {
	ccmtest.Binary(t)
	dir := e2eDir(t)
	writeManifest(t, dir, "m.yaml", `ccm:
  resources:
    - file:
        - @DIR@/plain: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
        - @DIR@/checked:
            content: "x"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
            health_checks:
              - command: /usr/bin/true
        - @DIR@/missing-check:
            content: "x"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
            health_checks:
              - command: /usr/bin/ccm-no-such-check --flag
                tries: 5
                try_sleep: 10s
`)
	start := time.Now()
	out, res := applyJSON(t, dir, "m.yaml", "--monitor-only")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("a missing check program was retried: the run took %v", took.Round(time.Millisecond))
	}
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (the missing check fails)\n%s", res.Code, res.Stderr)
	}
	plain := out.event(t, "file#"+dir+"/plain")
	if !plain.NotChecked || plain.Outcome() != "not checked" {
		t.Errorf("plain: not_checked %v outcome %q, want not checked", plain.NotChecked, plain.Outcome())
	}
	if c := out.event(t, "file#"+dir+"/checked"); c.NotChecked || c.Outcome() != "stable" {
		t.Errorf("checked: not_checked %v outcome %q, want stable", c.NotChecked, c.Outcome())
	}
	m := out.event(t, "file#"+dir+"/missing-check")
	if !m.Failed || len(m.HealthCheck) != 1 || m.HealthCheck[0].Tries != 1 || !strings.Contains(m.HealthCheck[0].Output, "not retried") {
		t.Errorf("missing-check: failed %v checks %+v, want one unknown try, not retried", m.Failed, m.HealthCheck)
	}
	if s := out.Summary; s.Unchecked != 1 || s.Stable != 1 || s.Failed != 1 {
		t.Errorf("summary %+v, want 1 unchecked, 1 stable, 1 failed", s)
	}
	if !strings.Contains(res.Stdout, `"not_checked": true`) {
		t.Errorf("--json lacks not_checked")
	}

	text := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--monitor-only", "--color", "never")
	for _, want := range []string{"file#" + dir + "/plain not checked", "Unchecked Resources: 1 (no health checks)"} {
		if !strings.Contains(text.Stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, text.Stdout)
		}
	}
}

func TestHonestRenderMessages(t *testing.T) {
	ccmtest.Binary(t)
	dir := e2eDir(t)
	writeManifest(t, dir, "m.yaml", `data:
  role: web
ccm:
  pre_message: "starting {{ Data.role }}"
  post_message: "done with {{ Data.role }}"
  resources:
    - file:
        - @DIR@/f: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
`)
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--render")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	for _, want := range []string{"pre_message: starting web", "post_message: done with web"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("--render lacks %q:\n%s", want, res.Stdout)
		}
	}
	res = ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--render", "--json")
	if res.Code != 0 {
		t.Fatalf("--render --json: exit %d\n%s", res.Code, res.Stderr)
	}
	var doc struct {
		Manifests []struct {
			File     string `json:"file"`
			Level    int    `json:"level"`
			Manifest struct {
				CCM struct {
					Pre  string `json:"pre_message"`
					Post string `json:"post_message"`
				} `json:"ccm"`
			} `json:"manifest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("--render --json is not one JSON document: %v\n%s", err, res.Stdout)
	}
	if len(doc.Manifests) != 1 || doc.Manifests[0].File != "m.yaml" || doc.Manifests[0].Manifest.CCM.Pre != "starting web" || doc.Manifests[0].Manifest.CCM.Post != "done with web" {
		t.Errorf("--render --json = %+v", doc)
	}
}
