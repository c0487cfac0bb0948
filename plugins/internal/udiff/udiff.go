// Package udiff writes line-based unified diffs (diff -u) with a bounded
// Myers search, for plugins that show what a change would do. It imports
// only the standard library and does no I/O, so it builds for wasip1.
package udiff

import (
	"bytes"
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around each change.
const context = 3

// Unified returns the unified diff turning old into new, headed by
// "--- oldName" and "+++ newName", or "" when they are equal. ok is false
// when more than maxEdits lines would be removed or added: the search stops
// there, so its cost stays bounded by maxEdits.
func Unified(oldName, newName string, old, new []byte, maxEdits int) (diff string, ok bool) {
	if bytes.Equal(old, new) {
		return "", true
	}
	a, b := split(old), split(new)
	ops, ok := edits(a, b, maxEdits)
	if !ok {
		return "", false
	}
	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(&w, a, b, ops)
	return w.String(), true
}

// split cuts text into lines, each keeping its "\n"; a last line without one
// stays as it is, so "a" and "a\n" differ.
func split(s []byte) []string {
	var out []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, string(s))
			break
		}
		out = append(out, string(s[:i+1]))
		s = s[i+1:]
	}
	return out
}

// op is one step of the edit script: an equal line (both indexes), a
// deletion of a[i] or an insertion of b[j].
type op struct {
	kind byte // ' ', '-', '+'
	i, j int
}

// edits returns a shortest edit script from a to b (Myers 1986), or false
// when it needs more than maxEdits insertions and deletions. Common prefix
// and suffix are matched first, outside the search.
func edits(a, b []string, maxEdits int) ([]op, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(ma, mb, maxEdits)
	if !ok {
		return nil, false
	}
	ops := make([]op, 0, pre+len(mid)+suf)
	for k := 0; k < pre; k++ {
		ops = append(ops, op{' ', k, k})
	}
	for _, o := range mid {
		ops = append(ops, op{o.kind, o.i + pre, o.j + pre})
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return ops, true
}

// myers is the greedy forward search, keeping each round's furthest
// reaching x per diagonal to trace the path back.
func myers(a, b []string, maxEdits int) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		if n+m > maxEdits {
			return nil, false
		}
		var ops []op
		for i := range n {
			ops = append(ops, op{'-', i, 0})
		}
		for j := range m {
			ops = append(ops, op{'+', n, j})
		}
		return ops, true
	}
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insertion
			} else {
				x = v[off+k-1] + 1 // right: deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the saved rounds from (n, m) back to (0, 0). trace[d]
// holds v before round d, for diagonals -d-1 .. d+1.
func backtrack(trace [][]int, n, m int) []op {
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		if d == 0 {
			prevX, prevY = 0, 0
		}
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', x, y})
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, op{'+', x, prevY})
			} else {
				rev = append(rev, op{'-', prevX, y})
			}
		}
		x, y = prevX, prevY
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// writeHunks groups the script into hunks with context lines around each
// change, merging hunks whose context would touch.
func writeHunks(w *strings.Builder, a, b []string, ops []op) {
	for start := 0; start < len(ops); {
		for start < len(ops) && ops[start].kind == ' ' {
			start++
		}
		if start == len(ops) {
			return
		}
		lo := max(start-context, 0)
		end := start // last change in this hunk
		for k := start + 1; k < len(ops); k++ {
			if ops[k].kind == ' ' {
				continue
			}
			if k-end > 2*context {
				break
			}
			end = k
		}
		hi := min(end+context+1, len(ops))
		hunk := ops[lo:hi]
		oldStart, newStart, oldN, newN := hunk[0].i, hunk[0].j, 0, 0
		for _, o := range hunk {
			if o.kind != '+' {
				oldN++
			}
			if o.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", span(oldStart, oldN), span(newStart, newN))
		for _, o := range hunk {
			line := ""
			switch o.kind {
			case '+':
				line = b[o.j]
			default:
				line = a[o.i]
			}
			w.WriteByte(o.kind)
			w.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				w.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = hi
	}
}

// span is a hunk range: "start,count", 1-based; an empty range names the
// line before it.
func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
