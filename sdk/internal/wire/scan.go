package wire

// plainPrefix returns how many leading bytes of s are plain in a JSON string:
// ASCII from 0x20 to 0x7f other than '"' and '\\', which need no escaping and
// no UTF-8 check. It tests 8 bytes per step, without a branch per byte: in a
// guest compiled with termination checks, every step of a loop costs a round
// trip to the host, so a byte-at-a-time scan costs about 8 times as much.
func plainPrefix[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if special(x) {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether any byte of x is not plain (see plainPrefix). Each
// term is the classic "has a byte less than n" or "has a zero byte" test: a
// borrow can only run upwards from a byte that matches, so a match is never
// missed, and a false one only sends the caller to its byte-by-byte loop.
func special(x uint64) bool {
	quote := x ^ ('"' * ones)
	backslash := x ^ ('\\' * ones)
	return (x|(x-0x20*ones)&^x|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}
