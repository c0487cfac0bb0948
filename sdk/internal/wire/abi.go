package wire

//go:generate go run ./gen

import (
	"errors"
	"reflect"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Marshal encodes v: an abi document the guest sends (export outputs and
// host-call requests), or any JSON-shaped value.
func Marshal(v any) ([]byte, error) {
	return AppendMarshal(make([]byte, 0, 512), v)
}

// AppendMarshal is Marshal appending to dst, which it returns grown: a
// caller that encodes one small document after another (the SDK's host
// calls) reuses one buffer instead of allocating 512 bytes each time.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	e := &encoder{b: dst}
	if !e.encodeDoc(v) {
		e.value(v)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

// list writes n elements with elem, or null for a nil slice.
func (e *encoder) list(n int, isNil bool, elem func(i int)) {
	if isNil {
		e.null()
		return
	}
	e.b = append(e.b, '[')
	for i := range n {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		elem(i)
	}
	e.b = append(e.b, ']')
}

// Unmarshal decodes data into v: a pointer to an abi document the guest
// receives (export inputs and host-call responses), or *any.
func Unmarshal(data []byte, v any) error {
	d := &decoder{data: data}
	err := d.value(v)
	if err == nil {
		err = d.end()
	}
	return err
}

// EachValidateRequest decodes a ccm_validate_batch input (an
// abi.ValidateBatchRequest) one request at a time, calling each with every
// request as soon as it is decoded, in order. Unmarshal would hold every
// request's decoded properties at once (for 10 000 resources, megabytes of
// a guest's memory, which never shrinks); validated one by one, each is
// garbage once its validation returns. Input errors are Unmarshal's; the
// requests before the error have been passed to each.
func EachValidateRequest(data []byte, each func(abi.ValidateRequest)) error {
	d := &decoder{data: data}
	err := d.object("abi.ValidateBatchRequest", func(k string) error {
		if k != "requests" {
			return d.skip()
		}
		_, err := d.array("[]abi.ValidateRequest", func() error {
			var r abi.ValidateRequest
			if err := d.decValidateRequest(&r); err != nil {
				return err
			}
			each(r)
			return nil
		})
		return err
	})
	if err == nil {
		err = d.end()
	}
	return err
}

// UnmarshalResponse decodes a host call's abi.Response document in one pass:
// the value of "ok" straight into ok (a pointer Unmarshal accepts; nil skips
// it), "error" into the returned CallError. Unmarshal into an abi.Response
// keeps "ok" raw, which a second Unmarshal then reads again; in a guest every
// byte read costs, so the SDK's host calls use this.
//
// The host writes either "ok" or "error". Given both, the CallError is
// returned and ok holds what "ok" decoded to.
func UnmarshalResponse(data []byte, ok any) (*abi.CallError, error) {
	d := &decoder{data: data}
	var callErr *abi.CallError
	err := d.object("abi.Response", func(k string) error {
		switch k {
		case "ok":
			if ok == nil {
				return d.skip()
			}
			return d.value(ok)
		case "error":
			if isNull, err := d.null(); isNull || err != nil {
				callErr = nil
				return err
			}
			if callErr == nil {
				callErr = &abi.CallError{}
			}
			return d.decCallError(callErr)
		}
		return d.skip()
	})
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, err
	}
	return callErr, nil
}

// value decodes the value at the decoder's position into v (see Unmarshal).
func (d *decoder) value(v any) error {
	if ok, err := d.decodeDoc(v); ok {
		return err
	}
	switch v := v.(type) {
	case *any:
		var err error
		*v, err = d.any()
		return err
	case nil:
		return errors.New("wire: cannot decode into nil")
	}
	return errors.New("wire: cannot decode into " + reflect.TypeOf(v).String())
}

// setSlice stores a decoded array as encoding/json does: null gives nil, []
// an empty non-nil slice.
func setSlice[T any](dst *[]T, out []T, isNull bool) {
	switch {
	case isNull:
		*dst = nil
	case out == nil:
		*dst = []T{}
	default:
		*dst = out
	}
}
