package host

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// checkDecodeOutput fails when decodeOutput and json.Unmarshal disagree on
// raw (the value, or whether it decodes); it reports whether the direct
// path took it.
func checkDecodeOutput(t *testing.T, raw []byte) bool {
	t.Helper()
	var fastB, slowB abi.BatchResponse
	_, took := fastResults(raw, (*outputScanner).result)
	errF, errS := decodeOutput(raw, &fastB), json.Unmarshal(raw, &slowB)
	if (errF != nil) != (errS != nil) || !reflect.DeepEqual(fastB, slowB) {
		t.Fatalf("BatchResponse %q:\n fast %#v (%v)\n json %#v (%v)", raw, fastB, errF, slowB, errS)
	}
	var fastV, slowV abi.ValidateBatchResponse
	_, tookV := fastResults(raw, (*outputScanner).validateResult)
	errF, errS = decodeOutput(raw, &fastV), json.Unmarshal(raw, &slowV)
	if (errF != nil) != (errS != nil) || !reflect.DeepEqual(fastV, slowV) {
		t.Fatalf("ValidateBatchResponse %q:\n fast %#v (%v)\n json %#v (%v)", raw, fastV, errF, slowV, errS)
	}
	return took || tookV
}

// TestDecodeOutputMatches: decodeOutput decodes the batch answers as
// json.Unmarshal does, whatever the form.
func TestDecodeOutputMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	strs := []string{"", "present", "created the file", "ünï", "\xff", "a\"b", "\u2028", "<&>", "tab\t"}
	pick := func() string { return strs[r.IntN(len(strs))] }
	took := 0
	for i := range 3000 {
		n := 1 + r.IntN(4)
		var doc []byte
		if i%2 == 0 {
			res := make([]abi.Result, n)
			for j := range res {
				res[j] = abi.Result{Changed: r.IntN(2) == 0, Refreshed: r.IntN(4) == 0, Provider: pick(), FinalEnsure: pick(),
					NoopMessage: pick(), Diff: pick(), Error: pick(), DurationNS: int64(r.IntN(3)) * 1_000_003}
				switch r.IntN(4) {
				case 0:
					res[j].Messages = []string{pick(), pick()}
				case 1:
					res[j].Messages = []string{}
				}
				if r.IntN(10) == 0 {
					res[j].State = map[string]any{"a": 1}
				}
			}
			doc, _ = json.Marshal(abi.BatchResponse{Results: res})
		} else {
			res := make([]abi.ValidateResponse, n)
			for j := range res {
				switch r.IntN(3) {
				case 0:
					res[j].Errors = []string{pick()}
				case 1:
					res[j].Errors = []string{}
				}
				if r.IntN(2) == 0 {
					res[j].Handle = int64(r.IntN(1 << 20))
				}
			}
			doc, _ = json.Marshal(abi.ValidateBatchResponse{Results: res})
		}
		// json.Marshal writes <, > and & escaped; the SDK does not.
		doc = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(doc)))
		if checkDecodeOutput(t, doc) {
			took++
		}
	}
	if took < 1000 {
		t.Fatalf("the direct path took only %d of 3000 documents", took)
	}
	for _, s := range []string{
		`{"results":[{"changed":true}]}`, `{"results":[{"changed":true,"changed":false}]}`, `{"results":[{"Changed":true}]}`,
		`{"results":[{"changed":true,"x":1}]}`, `{"results":[{"changed":true}]} `, `{"results":[{"changed":true}]}x`,
		`{"results":[{"duration_ns":007}]}`, `{"results":[{"duration_ns":-1}]}`, `{"results":[{"duration_ns":1e3}]}`,
		`{"results":[{"duration_ns":99999999999999999999}]}`, `{"results":[{"error":"a\nb"}]}`, `{"results":[{"error":"a` + "\n" + `b"}]}`,
		`{"results":[{"messages":null}]}`, `{"results":[{"messages":[]}]}`, `{"results":[{"messages":["a",]}]}`,
		`{"results":[{"errors":null},{"errors":[]},{"errors":["x"]}]}`, `{"results":[]}`, `{"results":null}`, `{"results":[{}]}`,
		`{"results":[{"changed":true}],"results":[]}`, `{"results":[{"state":{"a":1}}]}`, `{"results":[{"state":null}]}`, ``, `{`,
	} {
		checkDecodeOutput(t, []byte(s))
	}
	if !checkDecodeOutput(t, []byte(`{"results":[{"changed":false,"final_ensure":"present","duration_ns":80000}]}`)) {
		t.Fatal("a stable file's batch answer does not take the direct path")
	}
}

// FuzzDecodeOutput: decodeOutput and json.Unmarshal agree on any input.
func FuzzDecodeOutput(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"changed":false,"final_ensure":"present","duration_ns":80000}]}`,
		`{"results":[{"errors":null},{"errors":["x"]}]}`,
		`{"results":[{"changed":true,"provider":"posix","messages":["created the file"],"error":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeOutput(t, raw) })
}

// BenchmarkDecodeOutput: a batch answer of 256 stable files.
func BenchmarkDecodeOutput(b *testing.B) {
	res := make([]abi.Result, 256)
	for i := range res {
		res[i] = abi.Result{FinalEnsure: "present", Provider: "posix", DurationNS: 81234}
	}
	raw, _ := json.Marshal(abi.BatchResponse{Results: res})
	for _, v := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"direct", decodeOutput}, {"encoding/json", json.Unmarshal}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var out abi.BatchResponse
				if err := v.decode(raw, &out); err != nil || len(out.Results) != 256 {
					b.Fatal(err)
				}
			}
		})
	}
}
