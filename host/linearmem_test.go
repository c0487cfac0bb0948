package host

import "testing"

func TestSliceMemory(t *testing.T) {
	t.Parallel()
	const page = 64 << 10
	tests := []struct {
		name    string
		cap     uint64
		max     uint64
		sizes   []uint64 // successive Reallocate sizes
		wantCap uint64   // capacity after the last one
	}{
		{name: "doubles", cap: page, max: 100 * page, sizes: []uint64{page, 2 * page, 3 * page}, wantCap: 4 * page},
		{name: "grows within capacity", cap: 4 * page, max: 100 * page, sizes: []uint64{page, 3 * page}, wantCap: 4 * page},
		{name: "a large grow takes what it asks", cap: page, max: 100 * page, sizes: []uint64{page, 10 * page}, wantCap: 10 * page},
		{name: "capped at the maximum", cap: page, max: 3 * page, sizes: []uint64{page, 2 * page, 3 * page}, wantCap: 3 * page},
		{name: "no maximum declared", cap: 0, max: 0, sizes: []uint64{page, 2 * page}, wantCap: 2 * page},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := linearMemories.Allocate(tt.cap, tt.max).(*sliceMemory)
			var prev []byte
			for i, size := range tt.sizes {
				buf := m.Reallocate(size)
				if uint64(len(buf)) != size {
					t.Fatalf("grow %d: length %d, want %d", i, len(buf), size)
				}
				for j := range prev {
					if buf[j] != prev[j] {
						t.Fatalf("grow %d: byte %d changed", i, j)
					}
				}
				for j := len(prev); j < len(buf); j++ {
					if buf[j] != 0 {
						t.Fatalf("grow %d: new byte %d is %d, want 0", i, j, buf[j])
					}
				}
				for j := range buf {
					buf[j] = byte(j*7 + i) // what the guest would write
				}
				prev = append(prev[:0], buf...)
			}
			if got := uint64(cap(m.buf)); got != tt.wantCap {
				t.Fatalf("capacity %d pages, want %d", got/page, tt.wantCap/page)
			}
			m.Free()
			if m.buf != nil {
				t.Fatal("Free kept the memory")
			}
		})
	}
}
