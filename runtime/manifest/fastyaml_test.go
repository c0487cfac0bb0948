package manifest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// sameNodes compares every field of two node trees; "" when equal.
func sameNodes(a, b *yaml.Node, path string) string {
	if a == nil || b == nil {
		if a != b {
			return fmt.Sprintf("%s: nil %v against %v", path, a == nil, b == nil)
		}
		return ""
	}
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value ||
		a.Anchor != b.Anchor || (a.Alias == nil) != (b.Alias == nil) ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: fast %+v\n  yaml.v3 %+v", path, *a, *b)
	}
	for i := range a.Content {
		if d := sameNodes(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkFast fails when fastYAML accepts src and builds anything but what
// yaml.v3 builds; it reports whether fastYAML accepted.
func checkFast(t *testing.T, src []byte) bool {
	t.Helper()
	fast, ok := fastYAML(src)
	if !ok {
		return false
	}
	slow, err := parseYAMLv3(src, "x.yaml")
	if err != nil {
		t.Fatalf("fastYAML accepted what yaml.v3 refuses (%v):\n%s", err, src)
	}
	if d := sameNodes(fast, slow, ""); d != "" {
		t.Fatalf("fastYAML differs from yaml.v3 on\n%s\n%s", src, d)
	}
	return true
}

var fastAccepted = []string{
	"ccm:\n  resources:\n    - file:\n        - /tmp/a/f0.txt:\n            ensure: present\n            owner: root\n            mode: \"0644\"\n            content: \"file 0\"\n",
	"ccm:\n  resources:\n  - file:\n    - /x:\n        content: \"a\\n\\t\\\"q\\\" \\\\ {{ Data.x }} # not a comment\"\n",
	"a: 1\nb: -2\nc: 1.5\nd: true\ne: ~\nf: null\ng: 0644\nh: 0x1F\ni: .inf\nj: 2001-12-14\nk: yes\nl: on\n",
	"\"quoted key\": v\nplain key: some value   \n\n   \nx:\n- a\n- b\ny:\n    - c\n    -   d: 1\n        e: 2\n",
	"- a\n- b: c\n  d:\n  - e\n- \"f\"\n",
	"a:\n  b:\n    c: d\n  e: f\ng: h",
	"key: a,b;c^d(e)=f+g~h$i\n",
	"- -1\n- +1\n- _x\n- ./y\n- /z\n",
}

var fastRefused = []string{
	"", "a: b # comment\n", "# c\na: b\n", "a: {b: c}\n", "a: [b]\n", "a: &x b\nc: *x\n", "a: !t b\n",
	"a: |\n  b\n", "a: >\n  b\n", "a: 'b'\n", "a:\n", "a:\nb: c\n", "---\na: b\n", "a: b\n...\n",
	"a: b\n---\nc: d\n", "a:\tb\n", "a: b\r\n", "a: \"b\n  c\"\n", "a: b\n  c\n", "- a\n  b\n",
	"a: \"\\u0041\"\n", "a: é\n", "- - a\n", "-\n  a: b\n", "a: b: c\n", "a:b\n", " a: b\n",
	"a: b\n c: d\n", "? a\n: b\n", "<<: {a: b}\n", "a: %x\n", "a: @x\n", "plain scalar\n",
	"a: b\n  - c\n",
}

func TestFastYAMLMatches(t *testing.T) {
	for _, s := range fastAccepted {
		if !checkFast(t, []byte(s)) {
			t.Errorf("fastYAML refused, want it read:\n%s", s)
		}
	}
	for _, s := range fastRefused {
		if _, ok := fastYAML([]byte(s)); ok {
			t.Errorf("fastYAML read, want it refused:\n%s", s)
		}
	}
	// Deep nesting is yaml.v3's to judge (it has a limit of its own).
	var deep strings.Builder
	for i := range maxFastDepth + 1 {
		deep.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	deep.WriteString(strings.Repeat(" ", maxFastDepth+1) + "k: v\n")
	if _, ok := fastYAML([]byte(deep.String())); ok {
		t.Error("fastYAML read a document nested deeper than maxFastDepth")
	}
	if !checkFast(t, []byte(strings.SplitAfterN(deep.String(), "\n", maxFastDepth/2)[0]+"  x: y\n")) {
		t.Error("fastYAML refused a shallow document")
	}
	// Parse gives the same document either way.
	src := []byte(fastAccepted[0])
	fast, err := Parse(src, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if fast.Resources[0].Properties["mode"] != "0644" || fast.Resources[0].Name != "/tmp/a/f0.txt" {
		t.Fatalf("%+v", fast.Resources[0])
	}
}

// TestFastYAMLRandom compares fastYAML with yaml.v3 on documents put
// together from the subset's pieces and from pieces just outside it, at
// random indentations: whatever fastYAML accepts must be what yaml.v3
// builds.
func TestFastYAMLRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	keys := []string{"a", "b c", "/etc/x.conf", "\"q k\"", "-1", "1", "true", "~", "x:y", "a b ", "_", ".", "=", "+x", "(p)", "$v", "~x", "-x", "y-", "a,b"}
	vals := []string{"v", "\"s\"", "\"a\\nb\"", "0644", "\"0644\"", "-", "- x", "1.5", "null", "", "x y  z", "\"\"", "a:b", "2001-12-14", "1e3", "0o17", "0b1", "+.5", "-.inf", ".NaN", "1_000", "\"#\"", "a,b", "(x)", "=", "~", "- ", "\"\\\\\""}
	accepted := 0
	pick := func(l []string) string { return l[r.IntN(len(l))] }
	// ind jitters now and then: a wrong indentation must be refused or
	// read as yaml.v3 reads it.
	jitter := func(ind int) int {
		if r.IntN(25) == 0 {
			return max(0, ind+r.IntN(5)-2)
		}
		return ind
	}
	var block func(sb *strings.Builder, ind, depth int, first string)
	block = func(sb *strings.Builder, ind, depth int, first string) {
		seq := r.IntN(2) == 0
		for i := range 1 + r.IntN(3) {
			lead := first
			if i > 0 || lead == "" {
				lead = strings.Repeat(" ", jitter(ind))
			}
			if r.IntN(12) == 0 {
				sb.WriteString("\n")
			}
			if seq {
				sp := " " + strings.Repeat(" ", r.IntN(2)*r.IntN(3))
				if depth > 0 && r.IntN(2) == 0 {
					// "- key: ..." and the rest of the entry's mapping
					block(sb, ind+1+len(sp), depth-1, lead+"-"+sp)
					continue
				}
				sb.WriteString(lead + "-" + sp + pick(vals) + "\n")
				continue
			}
			sb.WriteString(lead + pick(keys) + ":")
			if depth == 0 || r.IntN(3) == 0 {
				sb.WriteString(" " + pick(vals) + strings.Repeat(" ", r.IntN(2)) + "\n")
				continue
			}
			sb.WriteString("\n")
			block(sb, ind+r.IntN(2)*(1+r.IntN(4)), depth-1, "")
		}
	}
	for range 20000 {
		var sb strings.Builder
		block(&sb, 0, 1+r.IntN(4), "")
		if checkFast(t, []byte(sb.String())) {
			accepted++
		}
	}
	if accepted < 3000 {
		t.Fatalf("only %d random documents in the subset: the test checks too little", accepted)
	}
	t.Logf("%d of 20000 random documents in the subset, all as yaml.v3 builds them", accepted)
}

// FuzzFastYAML: whatever fastYAML accepts is what yaml.v3 builds.
func FuzzFastYAML(f *testing.F) {
	for _, s := range append(fastAccepted, fastRefused...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkFast(t, src)
	})
}
