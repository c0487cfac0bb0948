package host

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// encodeInput writes a plugin call's input document as json.Marshal does,
// byte for byte (TestEncodeInputMatches). The batches of requests, every
// resource's type, name and properties, are written directly: reflection
// over each request and its properties was most of what encoding/json
// cost a warm run. Any other document, and any property value that is not
// a string, bool, integer, null, list or map, goes through json.Marshal.
func encodeInput(in any) ([]byte, error) {
	var e inputEncoder
	switch v := in.(type) {
	case abi.BatchRequest:
		e.b = make([]byte, 0, 256*len(v.Requests)+64)
		e.str(`{"requests":`)
		list(&e, v.Requests, (*inputEncoder).request)
		if v.StopOnFailure {
			e.str(`,"stop_on_failure":true`)
		}
		e.b = append(e.b, '}')
	case abi.ValidateBatchRequest:
		e.b = make([]byte, 0, 192*len(v.Requests)+64)
		e.str(`{"requests":`)
		list(&e, v.Requests, (*inputEncoder).validate)
		e.b = append(e.b, '}')
	case abi.Request:
		e.request(&v)
	case abi.ValidateRequest:
		e.validate(&v)
	default:
		return json.Marshal(in)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

type inputEncoder struct {
	b   []byte
	err error
}

func (e *inputEncoder) str(s string) { e.b = append(e.b, s...) }

func (e *inputEncoder) string(s string) { e.b = hostcall.AppendJSONString(e.b, s) }

func (e *inputEncoder) flag(key string, v bool) {
	if v {
		e.b = append(e.b, ',', '"')
		e.b = append(e.b, key...)
		e.str(`":true`)
	}
}

func (e *inputEncoder) request(r *abi.Request) {
	e.str(`{"type":`)
	e.string(r.Type)
	e.str(`,"name":`)
	e.string(r.Name)
	e.str(`,"properties":`)
	e.object(r.Properties)
	if r.Provider != "" {
		e.str(`,"provider":`)
		e.string(r.Provider)
	}
	e.flag("noop", r.Noop)
	e.flag("health_check_only", r.HealthCheckOnly)
	e.flag("refresh", r.Refresh)
	e.str(`,"working_dir":`)
	e.string(r.WorkingDir)
	e.flag("no_state", r.NoState)
	e.flag("diff", r.Diff)
	e.flag("hide_diff", r.HideDiff)
	e.flag("after_changes", r.AfterChanges)
	if r.Handle != 0 {
		e.str(`,"handle":`)
		e.b = strconv.AppendInt(e.b, r.Handle, 10)
	}
	e.b = append(e.b, '}')
}

func (e *inputEncoder) validate(r *abi.ValidateRequest) {
	e.str(`{"properties":`)
	e.object(r.Properties)
	if r.Provider != "" {
		e.str(`,"provider":`)
		e.string(r.Provider)
	}
	e.b = append(e.b, '}')
}

// object writes a map with its keys sorted, as encoding/json does.
func (e *inputEncoder) object(m map[string]any) {
	if m == nil {
		e.str("null")
		return
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.string(k)
		e.b = append(e.b, ':')
		e.value(m[k])
	}
	e.b = append(e.b, '}')
}

func (e *inputEncoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.str("null")
	case string:
		e.string(x)
	case bool:
		e.b = strconv.AppendBool(e.b, x)
	case int:
		e.b = strconv.AppendInt(e.b, int64(x), 10)
	case int64:
		e.b = strconv.AppendInt(e.b, x, 10)
	case map[string]any:
		e.object(x)
	case []any:
		if x == nil {
			e.str("null")
			return
		}
		e.b = append(e.b, '[')
		for i, el := range x {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.value(el)
		}
		e.b = append(e.b, ']')
	default:
		b, err := json.Marshal(x)
		if err != nil && e.err == nil {
			e.err = err
		}
		e.b = append(e.b, b...)
	}
}

// list writes items as a JSON array (null when nil, as encoding/json does),
// each with one.
func list[T any](e *inputEncoder, items []T, one func(*inputEncoder, *T)) {
	if items == nil {
		e.str("null")
		return
	}
	e.b = append(e.b, '[')
	for i := range items {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		one(e, &items[i])
	}
	e.b = append(e.b, ']')
}
