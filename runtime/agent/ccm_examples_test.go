package agent

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestCCMExamples parses CCM's own agent configuration examples verbatim
// (testdata/ccm: its build/agent.yaml, the configuration blocks of its
// agent and registration docs): every key is accepted, with CCM's meaning.
func TestCCMExamples(t *testing.T) {
	for _, tc := range []struct {
		file      string
		manifests int
		data      string
		port      int
		reg       string
	}{
		{"agent.yaml", 2, "obj://ccm-data/common", 0, ""},
		{"docs-config.yaml", 3, "kv://ccm-data/common", 9100, ""},
		{"registration-config.yaml", 1, "", 0, "jetstream"},
	} {
		src, err := os.ReadFile("testdata/ccm/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseConfig(src, tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if c.IntervalDuration != 5*time.Minute || len(c.Manifests) != tc.manifests || c.ExternalDataURL != tc.data ||
			c.MonitorPort != tc.port || c.Registration != tc.reg || c.NatsContext != "CCM" || c.CacheDir != DefaultCacheDir {
			t.Errorf("%s: %+v", tc.file, c)
		}
	}
}

// TestCCMUnit: our systemd unit starts the agent exactly as CCM's does.
func TestCCMUnit(t *testing.T) {
	execStart := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
				return v
			}
		}
		t.Fatalf("%s: no ExecStart", path)
		return ""
	}
	theirs, ours := execStart("testdata/ccm/ccm-agent.service"), execStart("../../examples/agent/ccm-agent.service")
	if theirs != "/usr/bin/ccm agent --config /etc/choria/ccm/agent.yaml" || ours != theirs {
		t.Fatalf("ExecStart: CCM's %q, ours %q", theirs, ours)
	}
}
