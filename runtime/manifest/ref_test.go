package manifest

import (
	"errors"
	"testing"
	"time"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Ref
		wantErr bool
	}{
		{name: "file path", in: "file#/etc/motd", want: Ref{Type: "file", Name: "/etc/motd"}},
		{name: "name with hash", in: "exec#echo a#b", want: Ref{Type: "exec", Name: "echo a#b"}},
		{name: "apply child", in: "apply#child.yaml", want: Ref{Type: "apply", Name: "child.yaml"}},
		{name: "underscore type", in: "my_type2#x", want: Ref{Type: "my_type2", Name: "x"}},
		{name: "no hash", in: "file/etc/motd", wantErr: true},
		{name: "empty name", in: "file#", wantErr: true},
		{name: "empty type", in: "#x", wantErr: true},
		{name: "upper type", in: "File#x", wantErr: true},
		{name: "digit first", in: "1file#x", wantErr: true},
		{name: "multi-line name", in: "file#a\nb", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRef(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("want ErrInvalid, got %v (ref %v)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRef: %v", err)
			}
			if got != tt.want || got.Type+"#"+got.Name != tt.in {
				t.Fatalf("got %#v (%s) want %#v", got, got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr bool
	}{
		{name: "go seconds", in: "30s", want: 30 * time.Second},
		{name: "go mixed", in: "1h30m", want: 90 * time.Minute},
		{name: "go millis", in: "250ms", want: 250 * time.Millisecond},
		{name: "zero", in: "0", want: 0},
		{name: "day", in: "1d", want: 24 * time.Hour},
		{name: "week", in: "2w", want: 14 * 24 * time.Hour},
		{name: "day and hours", in: "1d12h", want: 36 * time.Hour},
		{name: "week day minute", in: "1w1d1m", want: 8*24*time.Hour + time.Minute},
		{name: "fractional day", in: "1.5d", want: 36 * time.Hour},
		{name: "negative day", in: "-1d", want: -24 * time.Hour},
		{name: "empty", in: "", wantErr: true},
		{name: "no unit", in: "10", wantErr: true},
		{name: "no unit after day", in: "1d5", wantErr: true},
		{name: "unknown unit", in: "1y", wantErr: true},
		{name: "unknown unit with day", in: "1d1y", wantErr: true},
		{name: "words", in: "5 minutes", wantErr: true},
		{name: "overflow", in: "100000w", wantErr: true},
		{name: "bad number", in: "1..5d", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("want ErrInvalid, got %v (%v)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDuration: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %v want %v", got, tt.want)
			}
		})
	}
}
