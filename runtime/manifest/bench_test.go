package manifest

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// manifestN is the shape of CCM's slow case: one file block with defaults and n
// single-line content files.
func manifestN(n int) []byte {
	var b strings.Builder
	b.WriteString("data:\n  port: 8080\nccm:\n  resources:\n    - file:\n        - defaults: {owner: root, group: root, mode: \"0644\", ensure: present}\n")
	for i := range n {
		fmt.Fprintf(&b, "        - /srv/scratch/f%d.conf:\n            content: \"Listen {{ Data.port }}\\n\"\n", i)
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{250, 2000, 4000} {
		src := manifestN(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				doc, err := Parse(src, "bench.yaml")
				if err != nil {
					b.Fatal(err)
				}
				if len(doc.Resources) != n {
					b.Fatalf("got %d resources", len(doc.Resources))
				}
			}
		})
	}
}

// plainManifestN is the shape of a generated manifest (benchapply's): every
// property spelled out in block style, which fastYAML reads.
func plainManifestN(n int) []byte {
	var b strings.Builder
	b.WriteString("ccm:\n  resources:\n    - file:\n")
	for i := range n {
		fmt.Fprintf(&b, "        - /srv/scratch/f%d.txt:\n            ensure: present\n            owner: root\n            group: root\n            mode: \"0644\"\n            content: \"file %d\"\n", i, i)
	}
	return []byte(b.String())
}

func BenchmarkParsePlain(b *testing.B) {
	src := plainManifestN(2000)
	for _, v := range []struct {
		name  string
		parse func([]byte, string) (*yaml.Node, error)
	}{{"fast", parseYAML}, {"yaml.v3", parseYAMLv3}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.parse(src, "bench.yaml"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(src, "bench.yaml"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
