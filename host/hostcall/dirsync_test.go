package hostcall

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestDirSyncs(t *testing.T) {
	t.Parallel()
	base := tempDir(t)
	mkdir := func(t *testing.T, name string) string {
		t.Helper()
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// add takes over the directory it is given: a repeat is closed at once.
	open := func(t *testing.T, dir string) *os.File {
		t.Helper()
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name     string
		dirs     int // distinct directories added
		repeats  int // times each is added
		nilSyncs bool
		want     int // pending before SyncAll
	}{
		{name: "one directory, many writes", dirs: 1, repeats: 5, want: 1},
		{name: "several directories", dirs: 3, repeats: 2, want: 3},
		{name: "past the bound, sync at once", dirs: maxPendingDirs + 3, repeats: 1, want: maxPendingDirs},
		{name: "no DirSyncs, sync at once", dirs: 2, repeats: 1, nilSyncs: true, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d *DirSyncs
			if !tt.nilSyncs {
				d = &DirSyncs{}
			}
			for i := range tt.dirs {
				dir := mkdir(t, fmt.Sprintf("%s-%d", tt.name, i))
				for range tt.repeats {
					f := open(t, dir)
					d.add(dir, f)
					if pf, _ := d.pending(dir); pf != f {
						if err := f.Close(); err == nil {
							t.Fatalf("add left a repeated directory open")
						}
					}
				}
			}
			if got := d.count(); got != tt.want {
				t.Fatalf("%d directories pending, want %d", got, tt.want)
			}
			files := d.files()
			d.SyncAll()
			if got := d.count(); got != 0 {
				t.Fatalf("%d directories pending after SyncAll", got)
			}
			for _, f := range files {
				if err := f.Close(); err == nil {
					t.Fatalf("%s was left open after SyncAll", f.Name())
				}
			}
		})
	}
}

func (d *DirSyncs) count() int {
	if d == nil {
		return 0
	}
	return len(d.dirs)
}

func (d *DirSyncs) files() []*os.File {
	if d == nil {
		return nil
	}
	var out []*os.File
	for _, f := range d.dirs {
		out = append(out, f)
	}
	return out
}
