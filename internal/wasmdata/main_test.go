package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// module builds a module with one exported memory of two pages, the given
// data segments (raw, already encoded) and, if dataCount, a data count
// section; a custom section follows the data section.
func module(dataCount bool, segs ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 5, 3, 1, 0, 2)                                   // memory: min 2 pages
	b = append(b, 7, 10, 1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0) // export "memory"
	if dataCount {
		c := appendUleb(nil, uint64(len(segs)))
		b = append(b, sectionDataCount)
		b = appendUleb(b, uint64(len(c)))
		b = append(b, c...)
	}
	p := appendUleb(nil, uint64(len(segs)))
	for _, s := range segs {
		p = append(p, s...)
	}
	b = append(b, sectionData)
	b = appendUleb(b, uint64(len(p)))
	b = append(b, p...)
	return append(b, 0, 6, 4, 'n', 'o', 't', 'e', '!') // custom section "note"
}

func active(offset int32, data string) []byte {
	b := []byte{0, opI32Const}
	b = appendSleb(b, int64(offset))
	b = append(b, opEnd)
	b = appendUleb(b, uint64(len(data)))
	return append(b, data...)
}

// memoryOf instantiates mod in wazero and returns its memory's first
// two pages: what the data segments put there.
func memoryOf(t *testing.T, mod []byte) []byte {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	m, err := r.Instantiate(ctx, mod)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	mem, ok := m.Memory().Read(0, 2<<16)
	if !ok {
		t.Fatal("memory smaller than two pages")
	}
	return bytes.Clone(mem)
}

func countSegments(t *testing.T, mod []byte) int {
	t.Helper()
	for i := 8; i < len(mod); {
		id := mod[i]
		n, w, _ := uleb(mod[i+1:])
		if id == sectionData {
			c, _, _ := uleb(mod[i+1+w:])
			return int(c)
		}
		i += 1 + w + int(n)
	}
	return 0
}

// TestMergeKeepsMemory: segments out of order, some a few zero bytes
// apart, one far away and an empty one are merged where close, and a new
// instance's memory is byte for byte the same; the data count section
// follows the new count (wazero checks it) and the other sections are
// kept.
func TestMergeKeepsMemory(t *testing.T) {
	t.Parallel()
	mod := module(true,
		active(100, "world"),
		active(0, "hello"),
		active(10, "x"),
		active(70000, "far"),
		active(50, ""),
		active(105, "!"),
		active(64, "yz"),
	)
	out, err := mergeData(mod, 64)
	if err != nil {
		t.Fatal(err)
	}
	if got := countSegments(t, out); got != 2 {
		t.Fatalf("%d segments after merging, want 2 (0..106 and 70000)", got)
	}
	if !bytes.Equal(memoryOf(t, out), memoryOf(t, mod)) {
		t.Fatal("the merged module's memory differs")
	}
	if !bytes.HasSuffix(out, []byte{0, 6, 4, 'n', 'o', 't', 'e', '!'}) {
		t.Fatal("the custom section after the data section was lost")
	}
	// Nothing left to merge: the module comes back as it is.
	again, err := mergeData(out, 64)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("a second rewrite changed the module (err %v)", err)
	}
}

// TestMergeRefusesWhatItCannotProve: overlapping segments (the later one
// wins in wasm), passive segments and offsets that are not a constant are
// left alone, as a skipError.
func TestMergeRefusesWhatItCannotProve(t *testing.T) {
	t.Parallel()
	passive := append([]byte{1}, appendUleb(nil, 2)...)
	passive = append(passive, "ab"...)
	global := []byte{0, 0x23, 0, opEnd, 1, 'a'} // global.get 0
	for name, mod := range map[string][]byte{
		"overlap":    module(false, active(0, "hello"), active(3, "LO")),
		"passive":    module(true, active(0, "a"), passive),
		"global.get": module(false, active(0, "a"), global),
	} {
		_, err := mergeData(mod, 64)
		var skip *skipError
		if !errors.As(err, &skip) {
			t.Errorf("%s: err %v, want a skipError", name, err)
		}
	}
	if _, err := mergeData([]byte("\x00asm\x02\x00\x00\x00"), 64); err == nil || errors.As(err, new(*skipError)) {
		t.Errorf("a version 2 module: err %v, want a plain error", err)
	}
	truncated := module(false, active(0, "hello"))
	if _, err := mergeData(truncated[:len(truncated)-10], 64); err == nil {
		t.Error("a truncated module was accepted")
	}
}

// TestBuiltinModule: the file plugin as Go builds it has tens of thousands
// of segments; merged it has a few dozen and the same memory image.
func TestBuiltinModule(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile(filepath.Join("..", "..", "plugins", "wasm", "file.wasm"))
	if err != nil {
		t.Skipf("no built-in module (go generate ./plugins/...): %v", err)
	}
	segs, err := dataSegments(mod)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mergeData(mod, 64)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := dataSegments(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) > 100 || len(merged) > len(segs) {
		t.Fatalf("%d segments merged into %d", len(segs), len(merged))
	}
	if !bytes.Equal(image(segs), image(merged)) {
		t.Fatal("the merged module's data differs")
	}
	t.Logf("%d segments -> %d, module %d -> %d bytes", len(segs), len(merged), len(mod), len(out))
}

func dataSegments(mod []byte) ([]segment, error) {
	for i := 8; i < len(mod); {
		id := mod[i]
		n, w, _ := uleb(mod[i+1:])
		if id == sectionData {
			return parseData(mod[i+1+w : i+1+w+int(n)])
		}
		i += 1 + w + int(n)
	}
	return nil, errors.New("no data section")
}

// image applies segments to a zeroed memory, as instantiation does.
func image(segs []segment) []byte {
	var mem []byte
	for _, s := range segs {
		if end := int(s.offset) + len(s.init); end > len(mem) {
			mem = append(mem, make([]byte, end-len(mem))...)
		}
		copy(mem[s.offset:], s.init)
	}
	return mem
}
