package manifest

import (
	"fmt"
	"strings"
	"testing"
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
