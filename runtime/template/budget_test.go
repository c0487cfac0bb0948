package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBudgetAttacks: templates that would build gigabytes on the host fail
// fast with ErrBudget, naming the budget.
func TestBudgetAttacks(t *testing.T) {
	list := make([]any, 1000)
	for i := range list {
		list[i] = i
	}
	x := New(Env{Data: map[string]any{"s": "x", "big": strings.Repeat("y", 1<<20), "list": list}})
	tests := []struct {
		name, src, want string
	}{
		{"expr doubling in reduce", `{{ reduce(1..40, #acc + #acc, "x") }}`, "string concatenation (+) would build 32.0 MiB, over the 16 MiB one template value may hold (max_value_bytes)"},
		{"expr doubling in lets", `{{ let a = Data.big + Data.big; let b = a + a; let c = b + b; let d = c + c; let e = d + d; e + e }}`, "max_value_bytes"},
		{"expr many values", `{{ reduce(1..100, #acc + len(Data.big + Data.big + Data.big + Data.big + Data.big + Data.big + Data.big + Data.big), 0) }}`, "over the 64 MiB one evaluation may build (max_eval_bytes)"},
		{"expr repeat", `{{ repeat(Data.s, 10000000000) }}`, "repeat would build"},
		{"expr replace", `{{ replace(Data.big, "y", Data.big) }}`, "replace would build"},
		{"expr join", `{{ join(map(1..100, Data.big), ",") }}`, "join would build"},
		{"expr toJSON", `{{ toJSON(map(1..100, Data.big)) }}`, "toJSON would build"},
		{"expr list into a string", `x{{ map(1..100, Data.big) }}`, "max_value_bytes"},
		{"jet doubling in a loop", `{{ jet("[[ s := Data.s ]][[ range i := ints(0, 40) ]][[ s = s + s ]][[ end ]][[ len(s) ]]") }}`, "string concatenation (+) would build"},
		{"jet doubling without a loop", `{{ jet("[[ s := Data.big ]][[ s = s + s ]][[ s = s + s ]][[ s = s + s ]][[ s = s + s ]][[ s = s + s ]][[ len(s) ]]") }}`, "max_value_bytes"},
		{"jet loop", `{{ jet("[[ range i := ints(0, 1000000000) ]][[ end ]]") }}`, "over 1000000 loop iterations in one Jet template (max_jet_iterations)"},
		{"jet nested loops", `{{ jet("[[ range Data.list ]][[ range Data.list ]][[ range Data.list ]][[ end ]][[ end ]][[ end ]]") }}`, "max_jet_iterations"},
		{"jet output", `{{ jet("[[ range i := ints(0, 100) ]][[ Data.big ]][[ end ]]") }}`, "Jet output would build"},
		{"jet repeat", `{{ jet("[[ repeat(Data.s, 10000000000) ]]") }}`, "repeat would build"},
		{"jet replace", `{{ jet("[[ replace(Data.big, \"y\", Data.big, -1) ]]") }}`, "replace would build"},
		{"jet block yielding itself", `{{ jet("[[ block b() ]]x[[ yield b() ]][[ end ]]") }}`, "nested past 4000 stack frames (max_jet_depth)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := x.Expand(tt.src)
			d := time.Since(start)
			if !errors.Is(err, ErrBudget) && !strings.Contains(err.Error(), ErrBudget.Error()) {
				t.Fatalf("err = %v, want %v", err, ErrBudget)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestBudgetKeepsSemantics: the rewritten + and range behave as before.
func TestBudgetKeepsSemantics(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inc.jet"), []byte(`[[ "in" + "c" ]][[ range i, v := Data.list ]][[ i + v ]],[[ end ]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	x := New(Env{Dir: dir, Data: map[string]any{"list": []any{10, 20}, "m": map[string]any{"k": "v"}, "n": 2, "f": 1.5, "s": "a"}})
	tests := []struct{ src, want string }{
		{`{{ Data.s + "b" }}`, "ab"},
		{`{{ Data.n + 3 }}`, "5"},
		{`{{ Data.f + Data.n }}`, "3.5"},
		{`{{ jet("[[ 1 + 2 ]]") }}`, "3"},
		{`{{ jet("[[ 1 + 1.5 ]]") }}`, "2.5"},
		{`{{ jet("[[ 2.5 + 1 ]]") }}`, "3.5"},
		{`{{ jet("[[ Data.s + 1 ]]") }}`, "a1"},
		{`{{ jet("[[ Data.n + 1 ]]") }}`, "3"},
		{`{{ jet("[[ 5 - 2 ]]") }}`, "3"},
		{`{{ jet("[[ range k, v := Data.m ]][[ k + v ]][[ end ]]") }}`, "kv"},
		{`{{ jet("[[ range Data.list ]]x[[ end ]]") }}`, "xx"},
		{`{{ jet("[[ range i := ints(0, 3) ]][[ i ]][[ end ]]") }}`, "012"},
		{`{{ jet("[[ repeat(\"ab\", 2) ]] [[ replace(\"aXa\", \"X\", \"Y\", -1) ]] [[ json(Data.list) ]]") }}`, "abab aYa [10,20]"},
		{`{{ jet("[[ include \"inc.jet\" ]]") }}`, "inc10,21,"},
	}
	for _, tt := range tests {
		got, err := x.String(tt.src)
		if err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
}

// TestBudgetInInclude: an included template is rewritten too.
func TestBudgetInInclude(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bomb.jet"), []byte(`[[ s := "x" ]][[ range i := ints(0, 40) ]][[ s = s + s ]][[ end ]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	x := New(Env{Dir: dir})
	_, err := x.String(`{{ jet("[[ include \"bomb.jet\" ]]") }}`)
	if err == nil || !strings.Contains(err.Error(), "max_value_bytes") {
		t.Fatalf("err = %v", err)
	}
}

// TestBudgetSelfInclude: a file that includes itself fails, instead of
// overflowing the Go stack, which would kill the process.
func TestBudgetSelfInclude(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "self.jet"), []byte(`x[[ include "self.jet" ]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	x := New(Env{Dir: dir})
	_, err := x.String(`{{ jet("self.jet") }}`)
	if err == nil || !strings.Contains(err.Error(), "(max_jet_depth)") {
		t.Fatalf("err = %v", err)
	}
}
