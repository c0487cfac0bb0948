package wire

import (
	"reflect"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// flatSeeds are ccm_validate_batch inputs for the flat decoder's tests.
var flatSeeds = []string{
	`{"requests":[{"properties":{"content":"file 1","ensure":"present","group":"root","mode":"0644","name":"/srv/f1","owner":"root"}},{"properties":{"name":"/x"},"provider":"posix"}]}`,
	`{"requests":[{"properties":{"a":[1,"b",null,true,{"c":1.5}],"m":{"k":[]},"n":-0.5e-3,"t":true,"f":false,"z":null}}]}`,
	`{"requests":[{"properties":{"a":1,"a":"twice"},"properties":{"b":2}}]}`,
	`{"requests":[{"properties":{"a":1},"properties":null,"provider":"p"},{"provider":"q"}]}`,
	`{"requests":[{"properties":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"k0":"again"}}]}`,
	`{"requests":[{"properties":{"n\u0061me":"r\u00f6ot\n","mode":420}}],"other":[1]}`,
	`{"requests":[{"properties":"x"}]}`,
	`{"requests":[{"properties":{"a":1e999}}]}`,
	`{"requests":[{"properties":{"a":[1,}}]}`,
	`{"requests":null}`,
	`{"requests":[]} x`,
}

type flatRequest struct {
	props    map[string]any
	provider string
}

// decodeBoth decodes data with EachValidateRequest and
// EachValidateRequestFlat, the flat properties as their Map.
func decodeBoth(data []byte) (want, got []flatRequest, wantErr, gotErr error) {
	wantErr = EachValidateRequest(data, func(r abi.ValidateRequest) {
		want = append(want, flatRequest{r.Properties, r.Provider})
	})
	gotErr = EachValidateRequestFlat(data, &flat.Props{}, func(p *flat.Props, provider string) {
		got = append(got, flatRequest{p.Map(), provider})
	})
	for i := range want {
		if want[i].props == nil {
			want[i].props = map[string]any{} // Map gives no properties as an empty map
		}
	}
	return want, got, wantErr, gotErr
}

func checkSameAsMaps(t *testing.T, data []byte) {
	t.Helper()
	want, got, wantErr, gotErr := decodeBoth(data)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, into maps %v", data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nflat %#v\nmaps %#v", data, got, want)
	}
}

// TestEachValidateRequestFlat: the flat decoder gives each request's
// properties (as flat.Props.Map) and provider, and every error, exactly as
// EachValidateRequest does with maps.
func TestEachValidateRequestFlat(t *testing.T) {
	for _, s := range flatSeeds {
		checkSameAsMaps(t, []byte(s))
	}
	var names []string
	err := EachValidateRequestFlat([]byte(flatSeeds[0]), &flat.Props{}, func(p *flat.Props, provider string) {
		v, _ := p.Get("name")
		names = append(names, v.Str()+"|"+provider)
	})
	if err != nil || !reflect.DeepEqual(names, []string{"/srv/f1|", "/x|posix"}) {
		t.Fatalf("got %q, %v", names, err)
	}
}

// TestEachValidateRequestFlatAllocs: a stable file's request decodes with
// the allocations of its two strings that are not common words.
func TestEachValidateRequestFlatAllocs(t *testing.T) {
	doc := []byte(`{"requests":[{"properties":{"content":"file 1","ensure":"present","group":"root","mode":"0644","name":"/srv/files/f1.txt","owner":"root"}}]}`)
	var props flat.Props
	each := func(*flat.Props, string) {}
	allocs := testing.AllocsPerRun(100, func() {
		if err := EachValidateRequestFlat(doc, &props, each); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Fatalf("decoding a request allocates %v times, want at most 3", allocs)
	}
}

// FuzzEachValidateRequestFlat holds the flat decoder to the map one.
func FuzzEachValidateRequestFlat(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsMaps(t, data)
	})
}
