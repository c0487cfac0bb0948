package host

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// fillAll sets every field of the struct v points to: strings from s,
// bools true, maps from props, integers 2^33 + 7. A field added to abi.Request that
// encodeInput does not write makes TestEncodeInputMatches fail.
func fillAll(t *testing.T, v any, s string, props map[string]any) {
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(s + rv.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			f.Set(reflect.ValueOf(props))
		case reflect.Int64:
			f.SetInt(1<<33 + 7)
		default:
			t.Fatalf("%s.%s: a field of kind %s, which the test (and encodeInput) does not know", rv.Type(), rv.Type().Field(i).Name, f.Kind())
		}
	}
}

func randomValue(r *rand.Rand, depth int) any {
	strs := []string{"", "present", "0644", "/etc/motd", "a\"b", `c\d`, "<&>", "\u2028", "ünï", "\xff", "\x01\n\t", "{{ x }}"}
	switch n := r.IntN(12); {
	case n < 4:
		return strs[r.IntN(len(strs))]
	case n == 4:
		return r.IntN(3) == 0
	case n == 5:
		return []int{0, -1, 420, math.MaxInt, math.MinInt}[r.IntN(5)]
	case n == 6:
		return []float64{0, 1.5, -2, 1e21, 1e-7, 3}[r.IntN(6)]
	case n == 7:
		return nil
	case n == 8:
		return int64(r.IntN(1000))
	case n == 9 && depth < 3:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		if r.IntN(5) == 0 {
			return []any(nil)
		}
		return l
	case n == 10 && depth < 3:
		return randomProps(r, depth+1)
	default:
		return []string{"a", "<b>"} // through json.Marshal
	}
}

func randomProps(r *rand.Rand, depth int) map[string]any {
	if r.IntN(10) == 0 {
		return nil
	}
	keys := []string{"ensure", "owner", "group", "mode", "content", "b", "a", "A", "é", "<k>", "a\"", "", "z1", "z10", "z2"}
	m := map[string]any{}
	for range r.IntN(8) {
		m[keys[r.IntN(len(keys))]] = randomValue(r, depth)
	}
	return m
}

// TestEncodeInputMatches: encodeInput writes what json.Marshal writes.
func TestEncodeInputMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(in any) {
		t.Helper()
		want, werr := json.Marshal(in)
		got, gerr := encodeInput(in)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("encodeInput(%#v)\n got %s (%v)\nwant %s (%v)", in, got, gerr, want, werr)
		}
	}
	for i := range 3000 {
		var req abi.Request
		var vreq abi.ValidateRequest
		if i%3 == 0 {
			fillAll(t, &req, "x<", randomProps(r, 0))
			fillAll(t, &vreq, "", randomProps(r, 0))
		} else {
			req = abi.Request{Type: "file", Name: "/f", Properties: randomProps(r, 0), WorkingDir: "/w", NoState: i%2 == 0, Noop: i%5 == 0}
			vreq = abi.ValidateRequest{Properties: randomProps(r, 0)}
		}
		check(req)
		check(vreq)
		n := r.IntN(4)
		reqs, vreqs := make([]abi.Request, n), make([]abi.ValidateRequest, n)
		for j := range n {
			reqs[j] = abi.Request{Type: "file", Name: "n", Properties: randomProps(r, 0), Handle: int64(r.IntN(3))}
			vreqs[j] = abi.ValidateRequest{Properties: randomProps(r, 0), Provider: "p"}
		}
		if i%7 == 0 {
			reqs, vreqs = nil, nil
		}
		check(abi.BatchRequest{Requests: reqs, StopOnFailure: i%2 == 1})
		check(abi.ValidateBatchRequest{Requests: vreqs})
	}
	check(abi.Request{Properties: map[string]any{"x": math.NaN()}}) // an error either way
	check(abi.ValidateBatchRequest{Requests: []abi.ValidateRequest{{Properties: map[string]any{"c": make(chan int)}}}})
	check(abi.PluginInfo{Type: "other"})
	var bfields []string
	for i := range reflect.TypeFor[abi.BatchRequest]().NumField() {
		bfields = append(bfields, reflect.TypeFor[abi.BatchRequest]().Field(i).Name)
	}
	var vfields []string
	for i := range reflect.TypeFor[abi.ValidateBatchRequest]().NumField() {
		vfields = append(vfields, reflect.TypeFor[abi.ValidateBatchRequest]().Field(i).Name)
	}
	if !reflect.DeepEqual(bfields, []string{"Requests", "StopOnFailure"}) || !reflect.DeepEqual(vfields, []string{"Requests"}) {
		t.Fatalf("the batch documents changed (%v, %v): teach encodeInput their fields", bfields, vfields)
	}
}
