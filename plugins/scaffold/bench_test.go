package main

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkStable1000 is a stable apply of a 1000-file Jet tree (20
// directories of 50 files), through the host's real handlers.
func BenchmarkStable1000(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for d := 0; d < 20; d++ {
		for f := 0; f < 50; f++ {
			files[fmt.Sprintf("d%d/f%d.conf", d, f)] = "port=[[ data.port ]] host=[[ facts.host.info.hostname ]]\n"
		}
	}
	tree(b, filepath.Join(dir, "src"), files)
	target := filepath.Join(dir, "out")
	h := newHost()
	if res := apply(h, target, map[string]any{"source": "src"}, dir); res.Error != "" {
		b.Fatal(res.Error)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := apply(h, target, map[string]any{"source": "src"}, dir); res.Error != "" || res.Changed {
			b.Fatalf("%+v", res)
		}
	}
}
