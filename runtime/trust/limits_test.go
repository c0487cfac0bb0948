package trust

import (
	"strings"
	"testing"
	"time"
)

func TestDecodeLimits(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want Limits
		err  string
	}{
		{"empty", map[string]any{}, Limits{}, ""},
		{"all", map[string]any{
			"memory_mb": 64, "call_timeout": "1s", "output_bytes": "16MiB", "request_bytes": 4096,
			"exec_output_bytes": "2KB", "host_calls": float64(1000),
		}, Limits{MemoryBytes: 64 << 20, CallTimeout: time.Second, OutputBytes: 16 << 20, RequestBytes: 4096, ExecOutputBytes: 2000, HostCalls: 1000}, ""},
		{"size units", map[string]any{"output_bytes": "3 KiB", "request_bytes": "1GiB", "exec_output_bytes": "7B"},
			Limits{OutputBytes: 3 << 10, RequestBytes: 1 << 30, ExecOutputBytes: 7}, ""},
		{"not a map", "1s", Limits{}, "limits must be a map"},
		{"unknown key", map[string]any{"cpu": 1}, Limits{}, "limits.cpu: unknown limit; use memory_mb"},
		{"zero", map[string]any{"host_calls": 0}, Limits{}, "limits.host_calls: must be a positive integer"},
		{"negative size", map[string]any{"output_bytes": -1}, Limits{}, "positive integer"},
		{"fraction", map[string]any{"memory_mb": 1.5}, Limits{}, "positive integer"},
		{"memory too big", map[string]any{"memory_mb": 5000}, Limits{}, "above the wasm32 maximum"},
		{"bad unit", map[string]any{"output_bytes": "16 MiBs"}, Limits{}, `"16 MiBs" is not a positive size`},
		{"size overflow", map[string]any{"output_bytes": "99999999999GiB"}, Limits{}, "not a positive size"},
		{"duration not a string", map[string]any{"call_timeout": 5}, Limits{}, "must be a duration"},
		{"bad duration", map[string]any{"call_timeout": "soon"}, Limits{}, `"soon" is not a positive duration`},
		{"negative duration", map[string]any{"call_timeout": "-1s"}, Limits{}, "not a positive duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeLimits(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeLimits = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestLimitsLowerOnlyTightens(t *testing.T) {
	parent := Limits{CallTimeout: time.Second, OutputBytes: 1024}
	tests := []struct {
		name  string
		child Limits
		want  Limits
	}{
		{"nothing", Limits{}, parent},
		{"raise is ignored", Limits{CallTimeout: time.Hour, OutputBytes: 1 << 30}, parent},
		{"lower applies", Limits{CallTimeout: time.Millisecond}, Limits{CallTimeout: time.Millisecond, OutputBytes: 1024}},
		{"new field", Limits{HostCalls: 10, MemoryBytes: 1 << 20}, Limits{CallTimeout: time.Second, OutputBytes: 1024, HostCalls: 10, MemoryBytes: 1 << 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parent.Lower(tc.child); got != tc.want {
				t.Fatalf("Lower = %+v, want %+v", got, tc.want)
			}
			if got := tc.child.Lower(parent); got != tc.want {
				t.Fatalf("Lower is not symmetric: %+v", got)
			}
		})
	}
	if !(Limits{}).IsZero() || parent.IsZero() {
		t.Fatal("IsZero")
	}
}
