package template

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// render turns an expression's value into the text spliced into a string.
// nil is "" (CCM prints "<nil>", which no config file wants); lists and
// maps are JSON so that they can be read back; floats never use exponents
// below 1e21, so 1000000.0 renders as 1000000.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case time.Duration:
		return x.String()
	case []any, map[string]any, map[string]string, []string:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}
