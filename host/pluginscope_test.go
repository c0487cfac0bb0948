package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Containment of plugins across trust scopes (docs/security.md, "Plugins"):
// the plugin files a scope declares are read through its grant, an instance
// serves one scope, and every export runs under the scope's limits.

// hostileVariant is hostile.wasm with its describe attack chosen (see
// describeAttack in testdata/plugins/hostile): "spin", "output" or "alloc".
func hostileVariant(t testing.TB, attack string) []byte {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	marker := []byte("describe:none___")
	patch := []byte("describe:" + attack + strings.Repeat("_", 7-len(attack)))
	if bytes.Count(wasm, marker) != 1 || len(patch) != len(marker) {
		t.Fatalf("hostile.wasm holds %q %d times; rebuild it (go generate ./testdata/plugins/...)", marker, bytes.Count(wasm, marker))
	}
	return bytes.Replace(wasm, marker, patch, 1)
}

// hostileCaller is a caller of the hostile plugin in a scope granted dir.
func hostileCaller(dir string, l trust.Limits) trust.Caller {
	return trust.Caller{
		Resource: "hostile#x",
		Grants:   trust.Chain{{FSRead: []string{dir + "/**"}, FSWrite: []string{dir + "/**"}}},
		Limits:   l,
	}
}

func hostileApply(h *Host, c trust.Caller, attack string, props map[string]any) (abi.Result, error) {
	p := map[string]any{"attack": attack}
	for k, v := range props {
		p[k] = v
	}
	c.Resource = "hostile#" + attack
	return h.Apply(context.Background(), c, abi.Request{Type: "hostile", Name: attack, Properties: p})
}

// TestInstancePerScope: what a plugin read under one scope's grant and kept
// in its memory is not there when it runs for a sibling scope with another
// grant; within one scope it is (so the test would see a leak).
func TestInstancePerScope(t *testing.T) {
	t.Parallel()
	h := newHostileHost(t, Limits{})
	dirA, dirB := tempDir(t), tempDir(t)
	secret := filepath.Join(dirA, "secret")
	mustWrite(t, secret, "s3cret", 0o600)
	a, b := hostileCaller(dirA, trust.Limits{}), hostileCaller(dirB, trust.Limits{})

	if res, err := hostileApply(h, a, "stash", map[string]any{"path": secret}); err != nil || res.Error != "" {
		t.Fatalf("stash in scope A: %+v, %v", res, err)
	}
	out := filepath.Join(dirB, "out")
	if res, err := hostileApply(h, b, "leak_stash", map[string]any{"path": out}); err != nil || res.Error != "" {
		t.Fatalf("leak in scope B: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(out); string(got) != "stashed:" {
		t.Fatalf("scope B wrote %q: an instance crossed from one grant to another", got)
	}
	// The same scope keeps its instance: the stash is there.
	outA := filepath.Join(dirA, "out")
	if res, err := hostileApply(h, a, "leak_stash", map[string]any{"path": outA}); err != nil || res.Error != "" {
		t.Fatalf("leak in scope A: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(outA); string(got) != "stashed:s3cret" {
		t.Fatalf("scope A wrote %q, want its own stash (the instance was not kept)", got)
	}
	// Same grants but other limits: another scope, another instance.
	lowered := hostileCaller(dirA, trust.Limits{HostCalls: 50})
	if res, err := hostileApply(h, lowered, "leak_stash", map[string]any{"path": outA}); err != nil || res.Error != "" {
		t.Fatalf("leak under other limits: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(outA); string(got) != "stashed:" {
		t.Fatalf("a scope with the same grants and other limits wrote %q", got)
	}
}

// TestInstancesBounded: a plugin keeps at most maxInstances instances,
// closing the least recently used.
func TestInstancesBounded(t *testing.T) {
	t.Parallel()
	h := newHostileHost(t, Limits{})
	root := tempDir(t)
	var callers []trust.Caller
	for i := range maxInstances + 2 {
		d := filepath.Join(root, string(rune('a'+i)))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		callers = append(callers, hostileCaller(d, trust.Limits{}))
	}
	secret := filepath.Join(root, "a", "secret")
	mustWrite(t, secret, "kept", 0o600)
	if res, err := hostileApply(h, callers[0], "stash", map[string]any{"path": secret}); err != nil || res.Error != "" {
		t.Fatalf("stash: %+v, %v", res, err)
	}
	for _, c := range callers[1:] {
		if _, err := hostileApply(h, c, "status_spin", nil); err != nil { // apply of a status attack: a no-op
			t.Fatal(err)
		}
		if _, err := hostileApply(h, callers[0], "status_spin", nil); err != nil { // keep scope a recent
			t.Fatal(err)
		}
	}
	p := h.plugins["hostile"]
	p.mu.Lock()
	n := len(p.live)
	p.mu.Unlock()
	if n != maxInstances {
		t.Fatalf("%d live instances, want %d", n, maxInstances)
	}
	out := filepath.Join(root, "a", "out")
	if res, err := hostileApply(h, callers[0], "leak_stash", map[string]any{"path": out}); err != nil || res.Error != "" {
		t.Fatalf("leak: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(out); string(got) != "stashed:kept" {
		t.Fatalf("the most recently used scope lost its instance: wrote %q", got)
	}
}

// TestEveryExportUnderScopeLimits runs the attacks on ccm_describe,
// ccm_validate and ccm_status under a scope's lowered limits, the host's
// being the defaults (60 s, 16 MiB, 256 MiB): each stops at the scope's
// limit, named.
func TestEveryExportUnderScopeLimits(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	// One limit lowered at a time: a 100 MiB output needs the memory.
	const timeout, output, memory = "exceeded the call_timeout limit of 400ms", "output_bytes limit of 1048576", "memory_mb limit of 32 MiB"
	limits := map[string]trust.Limits{
		timeout: {CallTimeout: 400 * time.Millisecond},
		output:  {OutputBytes: 1 << 20},
		memory:  {MemoryBytes: 32 << 20},
	}

	describeTests := []struct{ attack, want string }{
		{"spin", timeout},
		{"output", output},
		{"alloc", memory},
	}
	for _, tt := range describeTests {
		// One host for both ways in, so the variant compiles once.
		wasm := hostileVariant(t, tt.attack)
		h, err := New(WithModules(map[string][]byte{"hostile": wasm}), WithCacheDir(testCacheDir()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close(context.Background()) })
		// Fill the compilation cache first: the time checked is the
		// attack's, not a cold compile's (minutes under -race on a loaded
		// machine). The describe below still compiles, from the cache.
		if cp, err := h.compile(context.Background(), "hostile", wasm, false); err != nil {
			t.Fatal(err)
		} else {
			_ = cp.Close(context.Background())
		}
		caller := hostileCaller(dir, limits[tt.want])
		// Twice: a failed describe is not remembered, so the second call
		// runs it again, under the limits again.
		t.Run("describe_"+tt.attack+"/info", func(t *testing.T) {
			for range 2 {
				start := time.Now()
				_, err := h.Info(context.Background(), caller, "hostile")
				checkLimited(t, err, start, tt.want)
			}
		})
		if tt.attack != "spin" {
			continue // Register describes the same way (loadLocked); one case shows it
		}
		t.Run("describe_"+tt.attack+"/register", func(t *testing.T) {
			file := filepath.Join(dir, "hostile-"+tt.attack+".wasm")
			if err := os.WriteFile(file, wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, _, err := h.Register(context.Background(), caller, file, "")
			checkLimited(t, err, start, tt.want)
		})
	}

	h := newHostileHost(t, Limits{})
	// Compile and describe first, as above: the time checked is the
	// attack's.
	if _, err := h.Info(context.Background(), trust.Caller{}, "hostile"); err != nil {
		t.Fatal(err)
	}
	exportTests := []struct{ name, attack, want string }{
		{"validate", "validate_spin", timeout},
		{"validate", "validate_output_100mib", output},
		{"validate", "validate_alloc_4gib", memory},
		{"status", "status_spin", timeout},
		{"status", "status_output_100mib", output},
		{"apply", "infinite_loop", timeout},
		{"apply", "output_100mib", output},
		{"apply", "alloc_4gib", memory},
	}
	for _, tt := range exportTests {
		t.Run(tt.attack, func(t *testing.T) {
			caller := hostileCaller(dir, limits[tt.want])
			props := map[string]any{"attack": tt.attack}
			start := time.Now()
			var err error
			switch tt.name {
			case "validate":
				_, err = h.Validate(context.Background(), caller, "hostile", []abi.ValidateRequest{{Properties: props}})
			case "status":
				_, err = h.Status(context.Background(), caller, abi.Request{Type: "hostile", Name: "x", Properties: props})
			case "apply":
				_, err = h.Apply(context.Background(), caller, abi.Request{Type: "hostile", Name: "x", Properties: props})
			}
			checkLimited(t, err, start, tt.want)
			// The host's own limits still serve the root scope.
			if _, err := h.Validate(context.Background(), trust.Caller{}, "hostile", []abi.ValidateRequest{{Properties: map[string]any{"attack": "panic"}}}); err != nil {
				t.Fatalf("root scope after the attack: %v", err)
			}
		})
	}
}

// checkLimited checks err is the limit want, and came within 30 s (the
// host's limits are 60 s: only the scope's stop the call sooner; a first
// call includes a compile, which is slow under -race).
func checkLimited(t *testing.T, err error, start time.Time, want string) {
	t.Helper()
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrLimit with %q", err, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("stopping it took %v", d)
	}
}

// TestRegisterReadsThroughGrant: a declared plugin file is read through the
// scope's fs_read grant. Outside it, every refusal reads the same (a file, a
// missing file, a FIFO, a symlink out of the grant) and shows no digest;
// inside, a pin mismatch names both digests, and a FIFO or an oversized file
// is refused at once.
func TestRegisterReadsThroughGrant(t *testing.T) {
	t.Parallel()
	granted, outside := tempDir(t), tempDir(t)
	caller := trust.Caller{Manifest: "/srv/vendor/main.yaml", Grants: trust.Chain{{FSRead: []string{granted + "/**"}}}}
	h := newBareHost(t)
	secretWasm := probeFile(t, outside, "secret.wasm")
	fifoOut := filepath.Join(outside, "fifo.wasm")
	fifoIn := filepath.Join(granted, "fifo.wasm")
	for _, f := range []string{fifoOut, fifoIn} {
		if err := syscall.Mkfifo(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(granted, "link.wasm")
	if err := os.Symlink(secretWasm, link); err != nil {
		t.Fatal(err)
	}
	linkMissing := filepath.Join(granted, "dangling.wasm")
	if err := os.Symlink(filepath.Join(outside, "nope.wasm"), linkMissing); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(granted, "dirlink") // a directory link out of the grant, dangling
	if err := os.Symlink(filepath.Join(outside, "nodir"), dirLink); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(granted, "huge.wasm")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<40); err != nil { // sparse: 1 TiB of nothing
		t.Fatal(err)
	}
	good := probeFile(t, granted, "probe.wasm")
	bad := strings.Repeat("0", 64)

	for _, file := range []string{secretWasm, filepath.Join(outside, "missing.wasm"), fifoOut, link, linkMissing, filepath.Join(dirLink, "x.wasm"), outside + "/../" + filepath.Base(outside) + "/secret.wasm"} {
		t.Run("outside "+filepath.Base(file), func(t *testing.T) {
			start := time.Now()
			_, _, err := h.Register(context.Background(), caller, file, bad)
			clean := filepath.Clean(file)
			want := "plugin " + clean + ": denied: fs_read not granted; a manifest's ccm.plugins are read through its scope's grant: add the file to fs_read in the grants of the apply that runs /srv/vendor/main.yaml"
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			if strings.Contains(err.Error(), probeSum()) {
				t.Fatal("the refusal shows the file's digest")
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("the refusal took too long")
			}
		})
	}
	inside := []struct{ name, file, pin, want string }{
		{"pin mismatch", good, bad, "sha256 mismatch: pinned " + bad + ", the file has " + probeSum()},
		{"fifo", fifoIn, "", "not a regular file"},
		{"huge", huge, "", "larger than 256 MiB"},
		{"missing", filepath.Join(granted, "missing.wasm"), "", "no such file"},
		{"missing directory", filepath.Join(granted, "nodir", "x.wasm"), "", "no such file"},
	}
	for _, tt := range inside {
		t.Run("inside "+tt.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := h.Register(context.Background(), caller, tt.file, tt.pin)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %v", time.Since(start))
			}
		})
	}
	if _, info, err := h.Register(context.Background(), caller, good, probeSum()); err != nil || info.Type != "probe" {
		t.Fatalf("granted, pinned file: %+v, %v", info, err)
	}
}

// TestOperatorDirFIFO: a FIFO named like a plugin in an operator directory
// is refused without blocking.
func TestOperatorDirFIFO(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newBareHost(t, WithPluginDirs(dir))
	done := make(chan error, 1)
	go func() {
		_, err := h.Info(context.Background(), trust.Caller{}, "fifo")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (other)") {
			t.Fatalf("err = %v, want a refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO in an operator plugin directory blocked")
	}
	e := h.Inspect(context.Background(), filepath.Join(dir, "fifo.wasm"))
	if e.Err == nil || !strings.Contains(e.Err.Error(), "not a regular file") {
		t.Fatalf("inspect: %v", e.Err)
	}
}

// TestScopeKey: chains or limits that differ in any field give different
// keys; equal ones, built apart, the same. It fails when abi.Capabilities
// grows a field keyOf does not hash.
func TestScopeKey(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[abi.Capabilities]().NumField(); n != 8 {
		t.Fatalf("abi.Capabilities has %d fields; hash the new one in keyOf and add it here", n)
	}
	l := DefaultLimits()
	base := func() trust.Caller {
		return trust.Caller{Grants: trust.Chain{{FSRead: []string{"/a/**"}, FSWrite: []string{"/b"}}}}
	}
	variants := []func(*trust.Caller){
		func(c *trust.Caller) { c.Grants[0].FSRead = []string{"/a/*"} },
		func(c *trust.Caller) { c.Grants[0].FSWrite = nil },
		func(c *trust.Caller) { c.Grants[0].FSRead, c.Grants[0].FSWrite = []string{"/a/**", "/b"}, nil },
		func(c *trust.Caller) { c.Grants[0].Exec = []string{"/bin/true"} },
		func(c *trust.Caller) { c.Grants[0].Net = []string{"*"} },
		func(c *trust.Caller) { c.Grants[0].ProbeExec = []string{"/bin/true"} },
		func(c *trust.Caller) { c.Grants[0].Users = true },
		func(c *trust.Caller) { c.Grants[0].Setid = true },
		func(c *trust.Caller) { c.Grants[0].Env = []string{"PATH"} },
		func(c *trust.Caller) { c.Grants[0].Env = []string{"PATH", "HOME"} },
		func(c *trust.Caller) { c.Grants = append(c.Grants, trust.All()) },
		func(c *trust.Caller) { c.Grants = nil },
		func(c *trust.Caller) { c.Limits.CallTimeout = time.Second },
		func(c *trust.Caller) { c.Limits.MemoryBytes = 1 << 20 },
		func(c *trust.Caller) { c.Limits.OutputBytes = 1 },
		func(c *trust.Caller) { c.Limits.RequestBytes = 1 },
		func(c *trust.Caller) { c.Limits.ExecOutputBytes = 1 },
		func(c *trust.Caller) { c.Limits.HostCalls = 1 },
	}
	seen := map[scopeKey]int{keyOf(base(), l): -1}
	for i, v := range variants {
		c := base()
		v(&c)
		k := keyOf(c, l)
		if j, dup := seen[k]; dup {
			t.Errorf("variant %d has the key of %d", i, j)
		}
		seen[k] = i
	}
	other := base()
	other.Resource, other.Mode, other.Manifest = "x#y", trust.ModeNoop, "/m.yaml"
	if keyOf(other, l) != keyOf(base(), l) {
		t.Error("equal grants and limits gave different keys")
	}
}

// TestRegisterBundled: a bundle's plugin file is read without the caller's
// fs_read grant, but only inside the bundle and only when pinned.
func TestRegisterBundled(t *testing.T) {
	t.Parallel()
	h := newBareHost(t)
	ctx := context.Background()
	bundle := tempDir(t)
	file := probeFile(t, bundle, "probe.wasm")
	confined := trust.Caller{Grants: trust.Chain{{FSRead: []string{"/nowhere/**"}}}}
	if _, _, err := h.Register(ctx, confined, file, probeSum()); err == nil || !strings.Contains(err.Error(), "denied: fs_read not granted") {
		t.Fatalf("Register outside the grant: %v, want the denial", err)
	}
	if _, _, err := h.RegisterBundled(ctx, confined, file, bundle, ""); err == nil || !strings.Contains(err.Error(), "must be pinned") {
		t.Fatalf("unpinned: %v", err)
	}
	if _, _, err := h.RegisterBundled(ctx, confined, file, tempDir(t), probeSum()); err == nil || !strings.Contains(err.Error(), "not inside its bundle") {
		t.Fatalf("outside the bundle: %v", err)
	}
	id, info, err := h.RegisterBundled(ctx, confined, file, bundle, probeSum())
	if err != nil || info.Type != "probe" || id == "" {
		t.Fatalf("RegisterBundled = %q, %+v, %v", id, info, err)
	}
}
