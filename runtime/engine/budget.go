package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Per-run bounds on what apply resources can make the host load. Depth
// (MaxDepth) alone does not bound a run: a manifest that applies itself
// under several spellings (m.yaml, ./m.yaml, a/../m.yaml) fans out
// exponentially, and a tree of distinct files can do the same without a
// cycle. The ancestry check ends the first at once; these caps end the
// second.
const (
	// MaxManifests is how many manifests one run may load, the root
	// included.
	MaxManifests = 1000
	// MaxManifestBytes is how much manifest source one run may read, all
	// manifests together.
	MaxManifestBytes = 64 << 20
)

// manifestID identifies a manifest file whatever path names it: its
// device and inode, so that spellings, symlinks and hard links of one file
// are one manifest.
type manifestID struct {
	dev, ino uint64
	path     string // used when the file system gives no inode
}

// identify stats the resolved manifest file. It runs after the file was
// read through the grant check, so it learns nothing the read did not.
func identify(file string) manifestID {
	fi, err := os.Stat(file)
	if err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return manifestID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
		}
	}
	return manifestID{path: file}
}

// ancestor is one manifest on the path from the root to a scope.
type ancestor struct {
	id   manifestID
	file string
}

// enter checks that the manifest of s, just read (n bytes), may load: it
// is not one of its own ancestors, and the run stays within MaxManifests
// and MaxManifestBytes. It returns the ancestry s's children inherit.
func (e *Engine) enter(s scope, n int) ([]ancestor, error) {
	id := identify(s.file)
	for i, a := range s.ancestry {
		if a.id == id {
			chain := make([]string, 0, len(s.ancestry)-i+1)
			for _, b := range s.ancestry[i:] {
				chain = append(chain, e.display(b.file))
			}
			chain = append(chain, e.display(s.file))
			return nil, fmt.Errorf("apply cycle: %s is already being applied (%s); a manifest may not apply itself, under any path, symlink or hard link", e.display(s.file), strings.Join(chain, " applies "))
		}
	}
	e.manifests++
	e.manifestBytes += int64(n)
	if e.manifests > MaxManifests {
		return nil, fmt.Errorf("too many manifests: this run has loaded %d, the most one run may load (max_manifests); does an apply fan out, e.g. apply the same tree many times?", MaxManifests)
	}
	if e.manifestBytes > MaxManifestBytes {
		return nil, fmt.Errorf("too much manifest source: this run has read %d bytes of manifests, over the %d MiB one run may read (max_manifest_bytes)", e.manifestBytes, MaxManifestBytes>>20)
	}
	out := make([]ancestor, len(s.ancestry), len(s.ancestry)+1)
	copy(out, s.ancestry)
	return append(out, ancestor{id: id, file: s.file}), nil
}

// interruptedBy completes "not applied: " for the resources a run did not
// start because its context ended.
func interruptedBy(ctx context.Context) string {
	return "the run was " + context.Cause(ctx).Error()
}
