package wire

import (
	"strings"
	"testing"
)

// plainPrefixSlow is plainPrefix one byte at a time, the reference.
func plainPrefixSlow(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(s)
}

func TestPlainPrefix(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{name: "empty", s: "", want: 0},
		{name: "all plain, short", s: "abc", want: 3},
		{name: "all plain, long", s: strings.Repeat("/etc/motd~\x7f ", 9), want: 108},
		{name: "quote in the first word", s: `abc"defghij`, want: 3},
		{name: "backslash in the second word", s: `abcdefgh\ijkl`, want: 8},
		{name: "control byte", s: "abcdefghijk\nmnop", want: 11},
		{name: "byte 0x1f", s: "abcdefghij\x1fmnop", want: 10},
		{name: "space and 0x21 are plain", s: "        !!!!!!!!", want: 16},
		{name: "non-ASCII", s: "abcdefghé", want: 8},
		{name: "0x80 after a match", s: "\"\x80\x80\x80\x80\x80\x80\x80", want: 0},
		{name: "0x5b and 0x5d around backslash", s: "[[[[]]]]\\", want: 8},
		{name: "0x21 and 0x23 around quote", s: "!!!!####\"", want: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainPrefix(tt.s); got != tt.want {
				t.Fatalf("plainPrefix(%q) = %d, want %d", tt.s, got, tt.want)
			}
			if got := plainPrefix([]byte(tt.s)); got != tt.want {
				t.Fatalf("plainPrefix([]byte(%q)) = %d, want %d", tt.s, got, tt.want)
			}
			if ref := plainPrefixSlow(tt.s); ref != tt.want {
				t.Fatalf("reference gives %d: the case is wrong", ref)
			}
		})
	}
}

// FuzzPlainPrefix holds the 8-bytes-at-a-time scan to the byte-by-byte one.
func FuzzPlainPrefix(f *testing.F) {
	f.Add("abcdefgh\"")
	f.Add("\x1f\x20\x21\x22\x5b\x5c\x5d\x7f\x80\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainPrefix(s), plainPrefixSlow(s); got != want {
			t.Fatalf("plainPrefix(%q) = %d, want %d", s, got, want)
		}
	})
}
