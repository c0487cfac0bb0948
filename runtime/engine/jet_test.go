package engine

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

func TestResourcesJetFile(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
data:
  sites: [alpha, beta]
  port: 8080
ccm:
  resources_jet_file: res/sites.jet
`,
		// The loop runs in Jet; the {{ }} templates it emits are
		// expanded afterwards like inline YAML.
		"res/sites.jet": `[[ range i, s := Data.sites ]]
- mark:
    - site-[[ s ]]:
        value:
          index: [[ i ]]
          port: "{{ Data.port }}"
          host: "{{ Facts.host.info.hostname }}"
[[ end ]]`,
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"site-alpha", "site-beta"}) {
		t.Fatalf("applied %v, want site-alpha then site-beta", got)
	}
	c, _ := f.call("site-beta")
	v, _ := c.req.Properties["value"].(map[string]any)
	if v["index"] != 1 || v["port"] != 8080 || v["host"] != "h1" {
		t.Fatalf("site-beta value = %#v", c.req.Properties)
	}
	if res.Summary.Total != 2 || res.Summary.Failed != 0 {
		t.Fatalf("summary = %+v", res.Summary)
	}
}

func TestResourcesJetFileErrors(t *testing.T) {
	tests := []struct {
		name     string
		jet      string
		want     string
		sentinel error
	}{
		{name: "empty output", jet: "# [[ lookup(\"data.x\", \"\") ]] nothing\n", want: "rendered an invalid resource list", sentinel: manifest.ErrNoResources},
		{name: "missing key names file and line", jet: "# x\n# [[ Data.x ]]\n", want: `r.jet:2: Data.x: Data has no key "x"`},
		{name: "jet syntax error names file and line", jet: "- mark:\n[[ if ]]\n", want: "r.jet:2: "},
		{name: "bad list names the rendered line", jet: "- mark:\n    - a: {}\n- mark:\n    - a: {}\n", want: "r.jet:4: mark#a", sentinel: manifest.ErrDuplicate},
		{name: "unknown type", jet: "- nosuch:\n    - a: {}\n", want: `r.jet:2: nosuch#a: unknown resource type "nosuch"`},
		{name: "invalid property names the rendered line", jet: "# x\n- mark:\n    - a: {bogus: 1}\n", want: "r.jet:3: mark#a: unknown property bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"m.yaml": "ccm:\n  resources_jet_file: r.jet\n",
				"r.jet":  tc.jet,
			})
			f := &fakePlugins{}
			_, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q is not %v", err, tc.sentinel)
			}
			if len(f.names()) != 0 {
				t.Errorf("applied %v after a load error", f.names())
			}
		})
	}
}
