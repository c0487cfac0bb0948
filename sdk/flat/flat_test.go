package flat

import (
	"reflect"
	"strconv"
	"testing"
)

func TestValueOf(t *testing.T) {
	type other struct{}
	cases := []struct {
		name string
		v    any
		kind Kind
	}{
		{"nil", nil, KindNull},
		{"string", "x", KindString},
		{"bool", true, KindBool},
		{"float64", 1.5, KindNumber},
		{"int", 3, KindNumber},
		{"int64", int64(4), KindNumber},
		{"list", []any{"a"}, KindList},
		{"strings", []string{"a"}, KindList},
		{"ints", []int{1}, KindList},
		{"map", map[string]any{}, KindMap},
		{"other", other{}, KindOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := ValueOf(tc.v)
			if v.Kind() != tc.kind || !reflect.DeepEqual(v.Any(), tc.v) {
				t.Fatalf("ValueOf(%#v) = kind %d, Any %#v", tc.v, v.Kind(), v.Any())
			}
		})
	}
	if v := String("s"); v.Kind() != KindString || v.Str() != "s" || v.Any() != "s" {
		t.Fatalf("String: %#v", v)
	}
	if v := Number(2); v.Kind() != KindNumber || v.Num() != 2 || v.Any() != 2.0 {
		t.Fatalf("Number: %#v", v)
	}
	if v := Boolean(true); v.Kind() != KindBool || !v.Bool() || v.Any() != true {
		t.Fatalf("Boolean: %#v", v)
	}
	if v := (Value{}); !v.IsNull() || v.Any() != nil {
		t.Fatalf("zero Value: %#v", v)
	}
}

// TestProps: Set keeps the first place of a key and the last value, below
// and above the length from which keys are indexed; FromMap and Map are
// inverses.
func TestProps(t *testing.T) {
	for _, n := range []int{0, 1, indexFrom - 1, indexFrom, 3 * indexFrom} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var p Props
			want := map[string]any{}
			for i := range n {
				k := "k" + strconv.Itoa(i)
				p.Set(k, Number(float64(i)))
				p.Set(k, String(k))
				want[k] = k
			}
			if p.Len() != n || !reflect.DeepEqual(p.Map(), want) {
				t.Fatalf("Len %d, Map %v", p.Len(), p.Map())
			}
			for i := range n {
				if e := p.At(i); e.Key != "k"+strconv.Itoa(i) {
					t.Fatalf("At(%d) = %q", i, e.Key)
				}
			}
			if _, ok := p.Get("missing"); ok {
				t.Fatal("Get(missing) found")
			}
			if got := FromMap(want).Map(); !reflect.DeepEqual(got, want) {
				t.Fatalf("FromMap(m).Map() = %v", got)
			}
			p.Reset()
			if p.Len() != 0 {
				t.Fatal("Reset left properties")
			}
			p.Set("k0", Boolean(true))
			if v, ok := p.Get("k0"); !ok || !v.Bool() || p.Len() != 1 {
				t.Fatal("Set after Reset")
			}
		})
	}
	var nilProps *Props
	if _, ok := nilProps.Get("x"); ok || nilProps.Len() != 0 {
		t.Fatal("nil Props is not empty")
	}
	if v, ok := FromMap(map[string]any{"n": nil}).Get("n"); !ok || !v.IsNull() {
		t.Fatal("a nil value is not a set null")
	}
}
