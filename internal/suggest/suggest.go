// Package suggest finds the name a typo most likely meant, for "did you
// mean" hints in error messages. It has no dependencies, so the host, the
// engine and the guest-side plugin helpers (compiled to wasm) share it.
package suggest

// Closest returns the candidate within two edits of name (the first of the
// closest, in the order given), or "" when none is that close. Names longer
// than 64 bytes are never close: hints cost nothing on hostile input.
func Closest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein edit distance between a and b, or a large
// number when either is longer than 64 bytes.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
