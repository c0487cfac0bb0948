package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// fill sets every field reachable from v to a non-zero value, so a document
// has every key its type can write.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		switch {
		case v.Type() == reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(`{"k":[1,"x"]}`))
		case v.Type().Elem().Kind() == reflect.Uint8:
			v.SetBytes([]byte("b\x00\xff"))
		default:
			s := reflect.MakeSlice(v.Type(), 1, 1)
			fill(t, s.Index(0))
			v.Set(s)
		}
	case reflect.Map:
		if v.Type() != reflect.TypeFor[map[string]any]() {
			t.Fatalf("fill: no sample for %s", v.Type())
		}
		v.Set(reflect.ValueOf(map[string]any{"k": "v", "n": []any{"x"}}))
	case reflect.Interface:
		v.Set(reflect.ValueOf("v"))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i))
			}
		}
	default:
		t.Fatalf("fill: no sample for %s", v.Type())
	}
}

func filled[T any](t *testing.T) T {
	t.Helper()
	var v T
	fill(t, reflect.ValueOf(&v).Elem())
	return v
}

// TestEveryFieldEncoded fills every field of each document the guest sends
// and checks wire writes it as encoding/json does: a field added to sdk/abi
// but not to the encoder fails here, instead of silently never reaching the
// host.
func TestEveryFieldEncoded(t *testing.T) {
	docs := []any{
		filled[abi.PluginInfo](t), filled[abi.ValidateResponse](t), filled[abi.ValidateBatchResponse](t),
		filled[abi.StatusResponse](t), filled[abi.Result](t), filled[abi.BatchResponse](t),
		filled[abi.FSStatRequest](t), filled[abi.FSReadRequest](t), filled[abi.FSWriteRequest](t),
		filled[abi.FSMkdirRequest](t), filled[abi.FSRemoveRequest](t), filled[abi.FSChownRequest](t),
		filled[abi.FSChmodRequest](t), filled[abi.FSListRequest](t), filled[abi.ExecRequest](t),
		filled[abi.UserLookupRequest](t), filled[abi.GroupLookupRequest](t), filled[abi.LookupRequest](t),
		filled[abi.LogRequest](t),
	}
	for _, v := range docs {
		t.Run(reflect.TypeOf(v).Name(), func(t *testing.T) { sameJSON(t, v) })
	}
}

// TestEveryFieldDecoded is the same for the documents the guest receives:
// encoding/json writes a fully filled value, wire must read all of it back.
func TestEveryFieldDecoded(t *testing.T) {
	tests := []struct {
		want any // a filled value
		into any // a pointer to decode into
	}{
		{filled[abi.ValidateRequest](t), new(abi.ValidateRequest)},
		{filled[abi.ValidateBatchRequest](t), new(abi.ValidateBatchRequest)},
		{filled[abi.Request](t), new(abi.Request)},
		{filled[abi.BatchRequest](t), new(abi.BatchRequest)},
		{filled[abi.Response](t), new(abi.Response)},
		{filled[abi.FSStatResponse](t), new(abi.FSStatResponse)},
		{filled[abi.FSReadResponse](t), new(abi.FSReadResponse)},
		{filled[abi.FSListResponse](t), new(abi.FSListResponse)},
		{filled[abi.ExecResponse](t), new(abi.ExecResponse)},
		{filled[abi.UserLookupResponse](t), new(abi.UserLookupResponse)},
		{filled[abi.GroupLookupResponse](t), new(abi.GroupLookupResponse)},
		{filled[abi.LookupResponse](t), new(abi.LookupResponse)},
	}
	for _, tt := range tests {
		t.Run(reflect.TypeOf(tt.want).Name(), func(t *testing.T) {
			data, err := json.Marshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if err := Unmarshal(data, tt.into); err != nil {
				t.Fatalf("Unmarshal %s: %v", data, err)
			}
			if got := reflect.ValueOf(tt.into).Elem().Interface(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decoded %s\ngot  %#v\nwant %#v", data, got, tt.want)
			}
		})
	}
}
