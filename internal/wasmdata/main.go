// Command wasmdata rewrites a WebAssembly module built by Go so that its
// data section holds a few large segments instead of tens of thousands of
// small ones, without changing the memory a new instance starts with.
//
// Go's linker starts a new data segment after every run of more than 8 zero
// bytes, so the file plugin's 1 MB of data comes as ~40 000 segments.
// wazero decodes each into its own structure (and each offset expression
// into its own allocation) and keeps them for the life of the compiled
// module, then gives every instance a slice header per segment: ~4.5 MiB of
// Go heap for 1 MB of data, counted live by the collector, and about a
// tenth of a warm run's start-up CPU. Merging the segments that are at most
// -gap bytes apart (the bytes between them are zero in a fresh memory, so
// writing zeros there changes nothing) leaves a dozen segments and 0.4 MB
// more bytes in the file.
//
// Usage: go run ./internal/wasmdata [-gap 64] [-sums FILE] module.wasm...
//
// -sums writes the modules' sha256 sums, after the rewrite, to FILE in
// sha256sum's format (`sha256sum -c FILE` checks them): the host reads a
// built-in's sum from there instead of hashing 3.5 MB in every run.
//
// A module is left as it is, with a note on stderr, when a segment is not
// what the rewrite can prove equivalent: passive segments, a memory other
// than the first, an offset that is not an i32.const, or segments that
// overlap.
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	gap := flag.Int("gap", 64, "merge segments at most this many (zero) bytes apart")
	sums := flag.String("sums", "", "write the modules' sha256 sums to this file")
	flag.Parse()
	status := 0
	for _, path := range flag.Args() {
		if err := rewrite(path, *gap); err != nil {
			fmt.Fprintf(os.Stderr, "wasmdata: %s: %v\n", path, err)
			status = 1
		}
	}
	if *sums != "" && status == 0 {
		if err := writeSums(*sums, flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "wasmdata: %v\n", err)
			status = 1
		}
	}
	os.Exit(status)
}

// writeSums writes the sha256 of each module to file, one line per module
// as sha256sum prints it, with the module's base name.
func writeSums(file string, paths []string) error {
	var b strings.Builder
	for _, path := range paths {
		mod, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(mod), filepath.Base(path))
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

func rewrite(path string, gap int) error {
	mod, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := mergeData(mod, gap)
	var skip *skipError
	if errors.As(err, &skip) {
		fmt.Fprintf(os.Stderr, "wasmdata: %s left as it is: %v\n", path, err)
		return nil
	}
	if err != nil {
		return err
	}
	if bytes.Equal(out, mod) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// skipError: the module is valid as far as read, but its data segments
// are not ones the rewrite handles.
type skipError struct{ reason string }

func (e *skipError) Error() string { return e.reason }

const (
	sectionData      = 11
	sectionDataCount = 12
	opI32Const       = 0x41
	opEnd            = 0x0b
)

type segment struct {
	offset uint32
	init   []byte
}

// mergeData returns mod with its data segments merged where they are at
// most gap bytes apart, or mod itself when there is nothing to merge.
func mergeData(mod []byte, gap int) ([]byte, error) {
	if len(mod) < 8 || !bytes.Equal(mod[:4], []byte("\x00asm")) || !bytes.Equal(mod[4:8], []byte{1, 0, 0, 0}) {
		return nil, errors.New("not a WebAssembly 1.0 binary module")
	}
	type section struct {
		id         byte
		start, end int // the payload
		head       int // where the section's id byte is
	}
	var sections []section
	for i := 8; i < len(mod); {
		head := i
		id := mod[i]
		n, w, err := uleb(mod[i+1:])
		if err != nil {
			return nil, fmt.Errorf("section at %d: %w", head, err)
		}
		start := i + 1 + w
		end := start + int(n)
		if n > uint64(len(mod)) || end > len(mod) {
			return nil, fmt.Errorf("section %d at %d runs past the end", id, head)
		}
		sections = append(sections, section{id: id, start: start, end: end, head: head})
		i = end
	}
	di := slices.IndexFunc(sections, func(s section) bool { return s.id == sectionData })
	if di < 0 {
		return mod, nil
	}
	segs, err := parseData(mod[sections[di].start:sections[di].end])
	if err != nil {
		return nil, err
	}
	merged := merge(segs, gap)
	if len(merged) == len(segs) {
		return mod, nil
	}

	var out bytes.Buffer
	out.Write(mod[:8])
	for _, s := range sections {
		switch s.id {
		case sectionData:
			var p bytes.Buffer
			p.Write(appendUleb(nil, uint64(len(merged))))
			for _, g := range merged {
				p.WriteByte(0) // active, memory 0
				p.WriteByte(opI32Const)
				p.Write(appendSleb(nil, int64(int32(g.offset))))
				p.WriteByte(opEnd)
				p.Write(appendUleb(nil, uint64(len(g.init))))
				p.Write(g.init)
			}
			out.WriteByte(sectionData)
			out.Write(appendUleb(nil, uint64(p.Len())))
			out.Write(p.Bytes())
		case sectionDataCount:
			c := appendUleb(nil, uint64(len(merged)))
			out.WriteByte(sectionDataCount)
			out.Write(appendUleb(nil, uint64(len(c))))
			out.Write(c)
		default:
			out.Write(mod[s.head:s.end])
		}
	}
	return out.Bytes(), nil
}

// parseData reads the data section's segments, sorted by offset; only
// active segments of memory 0 at an i32.const offset that do not overlap.
func parseData(p []byte) ([]segment, error) {
	n, w, err := uleb(p)
	if err != nil {
		return nil, fmt.Errorf("data section: %w", err)
	}
	p = p[w:]
	if n > uint64(len(p)) {
		return nil, fmt.Errorf("data section: %d segments in %d bytes", n, len(p))
	}
	segs := make([]segment, 0, n)
	for i := range n {
		if len(p) < 2 {
			return nil, fmt.Errorf("data segment %d: truncated", i)
		}
		if p[0] != 0 {
			return nil, &skipError{fmt.Sprintf("data segment %d is not an active segment of memory 0 (flags %d)", i, p[0])}
		}
		if p[1] != opI32Const {
			return nil, &skipError{fmt.Sprintf("data segment %d: offset is not an i32.const", i)}
		}
		off, w, err := sleb(p[2:])
		if err != nil || off < -1<<31 || off > 1<<31-1 {
			return nil, fmt.Errorf("data segment %d: bad offset", i)
		}
		p = p[2+w:]
		if len(p) < 1 || p[0] != opEnd {
			return nil, &skipError{fmt.Sprintf("data segment %d: offset is not a single i32.const", i)}
		}
		size, w, err := uleb(p[1:])
		if err != nil || size > uint64(len(p)-1-w) {
			return nil, fmt.Errorf("data segment %d: bad size", i)
		}
		p = p[1+w:]
		segs = append(segs, segment{offset: uint32(int32(off)), init: p[:size]})
		p = p[size:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("data section: %d bytes after the last segment", len(p))
	}
	slices.SortStableFunc(segs, func(a, b segment) int {
		if a.offset < b.offset {
			return -1
		}
		if a.offset > b.offset {
			return 1
		}
		return 0
	})
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i-1].offset)+uint64(len(segs[i-1].init)) > uint64(segs[i].offset) {
			return nil, &skipError{fmt.Sprintf("data segments at %d and %d overlap", segs[i-1].offset, segs[i].offset)}
		}
	}
	return segs, nil
}

// merge joins sorted, disjoint segments at most gap bytes apart, filling
// the gaps with zeros. An empty segment writes nothing and is dropped.
func merge(segs []segment, gap int) []segment {
	var out []segment
	for _, s := range segs {
		if len(s.init) == 0 {
			continue
		}
		if len(out) > 0 {
			last := &out[len(out)-1]
			end := uint64(last.offset) + uint64(len(last.init))
			if uint64(s.offset)-end <= uint64(gap) {
				last.init = append(last.init, make([]byte, uint64(s.offset)-end)...)
				last.init = append(last.init, s.init...)
				continue
			}
		}
		out = append(out, segment{offset: s.offset, init: slices.Clone(s.init)})
	}
	return out
}

func uleb(p []byte) (v uint64, n int, err error) {
	var shift uint
	for i, b := range p {
		if i == 5 {
			break
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, i + 1, nil
		}
		shift += 7
	}
	return 0, 0, errors.New("bad LEB128 number")
}

func sleb(p []byte) (v int64, n int, err error) {
	var shift uint
	for i, b := range p {
		if i == 5 {
			break
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("bad LEB128 number")
}

func appendUleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
