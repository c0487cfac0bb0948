package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// probeFile copies the probe plugin to dir/name and returns its path.
func probeFile(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, probeWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func probeSum() string {
	s := sha256.Sum256(probeWasm)
	return hex.EncodeToString(s[:])
}

// newBareHost is a host whose only built-in is a never-compiled "file".
func newBareHost(t testing.TB, opts ...Option) *Host {
	t.Helper()
	opts = append([]Option{WithModules(map[string][]byte{"file": []byte("not loaded")}), WithCacheDir(testCacheDir())}, opts...)
	h, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func TestRegister(t *testing.T) {
	t.Parallel()
	h := newBareHost(t)
	dir := tempDir(t)
	file := probeFile(t, dir, "vendor.wasm")
	ctx := context.Background()

	id, info, err := h.Register(ctx, trust.Caller{}, file, probeSum())
	if err != nil {
		t.Fatal(err)
	}
	if want := "probe@" + probeSum()[:12]; id != want || info.Type != "probe" {
		t.Fatalf("id %q type %q, want %q probe", id, info.Type, want)
	}
	// The same bytes elsewhere, unpinned, are the same plugin, compiled once.
	id2, _, err := h.Register(ctx, trust.Caller{}, probeFile(t, tempDir(t), "copy.wasm"), "")
	if err != nil || id2 != id {
		t.Fatalf("second register: id %q err %v, want %q", id2, err, id)
	}
	if n := len(h.bySum); n != 1 {
		t.Fatalf("%d registered modules, want 1", n)
	}
	if got, err := h.Info(ctx, trust.Caller{}, id); err != nil || got.Type != "probe" {
		t.Fatalf("Info(%s) = %+v, %v", id, got, err)
	}
	// By its type name alone the root scope does not know it.
	if _, err := h.Info(ctx, trust.Caller{}, "probe"); !errors.Is(err, hostapi.ErrUnknownType) {
		t.Fatalf("Info(probe) err = %v, want ErrUnknownType", err)
	}

	// Calls reach it through the caller's Plugin; Request.Type stays the
	// type, and the scope's grant still bounds every host call.
	target := filepath.Join(dir, "out")
	caller := trust.Caller{Resource: "probe#t", Plugin: id, Grants: trust.Chain{{FSWrite: []string{filepath.Join(dir, "allowed", "**")}}}}
	res, err := h.Apply(ctx, caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{"calls": toAny(t, []hc{
		{abi.CallFSWrite, abi.FSWriteRequest{Path: target, Content: []byte("x"), Mode: 0o644}},
	})}})
	if err != nil || res.Error != "" {
		t.Fatalf("Apply: %v %s", err, res.Error)
	}
	wantCode(t, responses(t, res.State)[0], abi.CodeDenied, "fs_write not granted for "+target)
	caller.Grants = grantDir(t, dir)
	res, err = h.Apply(ctx, caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{"calls": toAny(t, []hc{
		{abi.CallFSWrite, abi.FSWriteRequest{Path: target, Content: []byte("x"), Mode: 0o644}},
	})}})
	if err != nil || res.Error != "" {
		t.Fatalf("Apply: %v %s", err, res.Error)
	}
	okInto(t, responses(t, res.State)[0], nil)
	if b, err := os.ReadFile(target); err != nil || string(b) != "x" {
		t.Fatalf("target: %q, %v", b, err)
	}
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	probe := probeFile(t, dir, "probe.wasm")
	notWasm := filepath.Join(dir, "junk.wasm")
	if err := os.WriteFile(notWasm, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	opDir := tempDir(t)
	probeFile(t, opDir, "probe.wasm")
	wrong := strings.Repeat("0", 64)

	tests := []struct {
		name  string
		opts  []Option
		file  string
		pin   string
		want  []string
		taken bool
	}{
		{name: "pin mismatch", file: probe, pin: wrong,
			want: []string{"plugin " + probe + ": sha256 mismatch: pinned " + wrong + ", the file has " + probeSum(), "update the pin (sha256sum " + probe + ")"}},
		{name: "relative path", file: "probe.wasm", want: []string{"plugin probe.wasm: the path must be absolute"}},
		{name: "missing file", file: filepath.Join(dir, "nope.wasm"), want: []string{"plugin open " + filepath.Join(dir, "nope.wasm") + ": no such file"}},
		{name: "directory", file: dir, want: []string{"plugin " + dir + ": not a regular file"}},
		{name: "not wasm", file: notWasm, want: []string{"plugin " + notWasm + ": compile plugin"}},
		{name: "shadows a built-in", opts: []Option{WithModules(map[string][]byte{"probe": probeWasm})}, file: probe,
			want: []string{"plugin " + probe + `: provides type "probe", which is built in`}, taken: true},
		{name: "shadows an operator plugin", opts: []Option{WithPluginDirs(opDir)}, file: probe,
			want: []string{`provides type "probe", which the operator installed as ` + filepath.Join(opDir, "probe.wasm")}, taken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newBareHost(t, tt.opts...)
			_, _, err := h.Register(context.Background(), trust.Caller{}, tt.file, tt.pin)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if got := errors.Is(err, hostapi.ErrTypeTaken); got != tt.taken {
				t.Errorf("errors.Is(ErrTypeTaken) = %v, want %v", got, tt.taken)
			}
			if tt.pin != "" && len(h.bySum) != 0 {
				t.Errorf("a module with a bad pin was kept")
			}
		})
	}
}

func TestPluginDirs(t *testing.T) {
	t.Parallel()
	sys, user, missing := tempDir(t), tempDir(t), filepath.Join(tempDir(t), "none")
	probeFile(t, sys, "probe.wasm")
	probeFile(t, sys, "misnamed.wasm")
	probeFile(t, user, "file.wasm")
	probeFile(t, user, "twice.wasm")
	probeFile(t, sys, "twice.wasm")
	h := newBareHost(t, WithPluginDirs(sys, user, missing))
	ctx := context.Background()

	if info, err := h.Info(ctx, trust.Caller{}, "probe"); err != nil || info.Type != "probe" {
		t.Fatalf("Info(probe) = %+v, %v", info, err)
	}
	tests := []struct {
		typ  string
		want string
	}{
		{"misnamed", "operator plugin " + filepath.Join(sys, "misnamed.wasm") + ` describes type "probe"; name the file after the type it provides (probe.wasm)`},
		{"file", "operator plugin " + filepath.Join(user, "file.wasm") + ` provides type "file", which is built in`},
		{"twice", `type "twice" is provided by both ` + filepath.Join(sys, "twice.wasm") + " and " + filepath.Join(user, "twice.wasm")},
		{"nosuch", "no plugin provides it (plugin types here: file, misnamed, probe, twice)"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			_, err := h.Info(ctx, trust.Caller{}, tt.typ)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the missing plugin directory was created: %v", err)
	}
}
