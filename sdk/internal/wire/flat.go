package wire

import (
	"strconv"

	"github.com/ccm-dev/ccm/sdk/flat"
)

// EachValidateRequestFlat is EachValidateRequest for an sdk.FlatPreparer:
// each request's properties are decoded into props (emptied first for each
// request, its storage reused) instead of a map[string]any, and each is
// called with them and the request's provider. Strings, numbers, booleans
// and null are stored unboxed; lists and maps as Unmarshal decodes them
// into an interface. Input errors are EachValidateRequest's, and
// props.Map() is what it would have passed as Properties (a null or
// missing "properties" gives no properties; it gave a nil map).
func EachValidateRequestFlat(data []byte, props *flat.Props, each func(props *flat.Props, provider string)) error {
	d := &decoder{data: data}
	err := d.object("abi.ValidateBatchRequest", func(k string) error {
		if k != "requests" {
			return d.skip()
		}
		_, err := d.array("[]abi.ValidateRequest", func() error {
			props.Reset()
			var provider string
			err := d.object("abi.ValidateRequest", func(k string) error {
				switch k {
				case "properties":
					return d.flatProps(props)
				case "provider":
					return d.string(&provider)
				}
				return d.skip()
			})
			if err != nil {
				return err
			}
			each(props, provider)
			return nil
		})
		return err
	})
	if err == nil {
		err = d.end()
	}
	return err
}

// flatProps is anyMap into props: null empties it, an object adds to it.
func (d *decoder) flatProps(props *flat.Props) error {
	switch d.peek() {
	case 'n':
		props.Reset()
		return d.literal("null")
	case '{':
	default:
		return d.mismatch("map[string]interface {}")
	}
	return d.object("map[string]interface {}", func(key string) error {
		v, err := d.flatValue()
		props.Set(key, v)
		return err
	})
}

// flatValue is any, storing scalars unboxed.
func (d *decoder) flatValue() (flat.Value, error) {
	switch c := d.peek(); {
	case c == '"':
		s, err := d.word()
		return flat.String(s), err
	case c == 't':
		return flat.Boolean(true), d.literal("true")
	case c == 'f':
		return flat.Boolean(false), d.literal("false")
	case c == 'n':
		return flat.Value{}, d.literal("null")
	case c == '-' || isDigit(c):
		s, err := d.number()
		if err != nil {
			return flat.Value{}, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return flat.Value{}, &TypeError{Value: "number " + s, Type: "float64"}
		}
		return flat.Number(f), nil
	}
	v, err := d.any()
	return flat.ValueOf(v), err
}
