package template

import (
	"fmt"
	"testing"
)

// resources2000 builds the property maps of 2000 file resources shaped like
// a real manifest: mostly plain strings, a templated name and content, and
// a few lookups.
func resources2000() []any {
	out := make([]any, 2000)
	for i := range out {
		out[i] = map[string]any{
			"name":    fmt.Sprintf("/srv/app/conf.d/%d.conf", i),
			"ensure":  "present",
			"owner":   "app",
			"group":   "app",
			"mode":    "0644",
			"content": "# managed on {{ Facts.host.info.hostname }}\nListen ${ Data.port }\n",
			"port":    "{{ Data.port }}",
			"tag":     "{{ lookup('data.tag', 'none') }}",
			"require": []any{"package#httpd"},
		}
	}
	return out
}

func benchEnv() Env {
	return Env{
		Facts:   map[string]any{"host": map[string]any{"info": map[string]any{"hostname": "web01"}}},
		Data:    map[string]any{"port": 8080, "tag": "blue"},
		Environ: map[string]string{"HOME": "/root"},
	}
}

// BenchmarkExpand expands 2000 resources' properties with one Expander,
// as the engine does for one manifest.
func BenchmarkExpand(b *testing.B) {
	rs := resources2000()
	b.ReportAllocs()
	for b.Loop() {
		x := New(benchEnv())
		for _, r := range rs {
			if _, err := x.Expand(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkExpandPlain is the cost of a string without templates.
func BenchmarkExpandPlain(b *testing.B) {
	x := New(benchEnv())
	var v any = "/srv/app/conf.d/1.conf"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Expand(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandCached is one cached single-expression string.
func BenchmarkExpandCached(b *testing.B) {
	x := New(benchEnv())
	var v any = "{{ Data.port }}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Expand(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileCold is the cost the cache saves: a fresh compile.
func BenchmarkCompileCold(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileNow("Facts.host.info.hostname + ':' + string(Data.port)", false, false); err != nil {
			b.Fatal(err)
		}
	}
}
