package shellwords

import (
	"errors"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"empty", "", nil, nil},
		{"blanks", "  \t\n ", nil, nil},
		{"plain", "/bin/echo hello  world", []string{"/bin/echo", "hello", "world"}, nil},
		{"single quotes keep everything", `echo 'a "b" \c $d'`, []string{"echo", `a "b" \c $d`}, nil},
		{"double quotes", `echo "a 'b' \"c\" \d"`, []string{"echo", `a 'b' "c" \d`}, nil},
		{"backslash escapes blank", `touch a\ b`, []string{"touch", "a b"}, nil},
		{"adjacent quoting joins", `x'a'"b"c`, []string{"xabc"}, nil},
		{"empty quoted word", `printf ''`, []string{"printf", ""}, nil},
		{"metacharacters are literal", `echo ; rm -rf / | cat`, []string{"echo", ";", "rm", "-rf", "/", "|", "cat"}, nil},
		{"line continuation", "a\\\nb", []string{"ab"}, nil},
		{"unterminated single", `echo 'x`, nil, ErrUnterminated},
		{"unterminated double", `echo "x`, nil, ErrUnterminated},
		{"trailing backslash", `echo x\`, nil, ErrUnterminated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Split(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`a 'b' "c\"d" e\ f`, `'`, `"\`, "x\\\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil && words != nil {
			t.Fatalf("words %q returned with error %v", words, err)
		}
	})
}
