package sdkexamples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// wasmRustc returns a rustc that has the wasm32-unknown-unknown standard
// library, as scripts/build-examples.sh picks it; it skips (or, with
// CCM_REQUIRE_EXAMPLES=1, fails) when there is none.
func wasmRustc(t *testing.T) string {
	t.Helper()
	for _, r := range []string{"rustc", "/usr/bin/rustc"} {
		out, err := exec.Command(r, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "lib", "rustlib", "wasm32-unknown-unknown")); err == nil && fi.IsDir() {
			return r
		}
	}
	msg := "no rustc with the wasm32-unknown-unknown target (apt-get install rustc libstd-rust-dev-wasm32 lld-14)"
	if os.Getenv("CCM_REQUIRE_EXAMPLES") == "1" {
		t.Fatal("CCM_REQUIRE_EXAMPLES=1 but " + msg)
	}
	t.Skip(msg)
	return ""
}

// TestRustPanicIsLogged: a Rust plugin that panics fails its call, and the
// panic's message and place reach the resource's log before the trap.
func TestRustPanicIsLogged(t *testing.T) {
	rustc := wasmRustc(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "rust_panic.rs")
	code := `#[path = "` + filepath.Join(repoRoot(), "sdk", "rust", "ccm.rs") + `"]
mod ccm;
use ccm::{Json, Request, Resource};
struct P;
impl Resource for P {
    fn info() -> Json {
        Json::parse(r#"{"abi":1,"type":"rust_panic","version":"0.1.0","providers":["posix"],"ensure":["present"],"default_ensure":"present"}"#).unwrap()
    }
    fn validate(_: &Json) -> Vec<String> { Vec::new() }
    fn status(_: &Request) -> Json { Json::obj(vec![("final_ensure", "present".into())]) }
    fn apply(req: &Request) -> Json {
        let items: Vec<u8> = Vec::new();
        panic!("deliberate: {} has {} items", req.name, items.len())
    }
}
ccm_plugin!(P);
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(dir, "rust_panic.wasm")
	out, err := exec.Command(rustc, "--edition", "2021", "--target", "wasm32-unknown-unknown", "--crate-type", "cdylib",
		"-C", "opt-level=s", "-C", "panic=abort", "-o", wasm, src).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", rustc, err, out)
	}
	h, err := host.New(host.WithModules(map[string][]byte{"rust_panic": readWasm(t, dir, "rust_panic")}), host.WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())

	var mu sync.Mutex
	var logged []string
	caller := trust.Caller{Resource: "rust_panic#t", Grants: trust.Chain{trust.All()}, Log: func(level, message string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, level+": "+message)
	}}
	res, err := h.Apply(context.Background(), caller, abi.Request{Type: "rust_panic", Name: "t", Properties: map[string]any{}})
	if err == nil && res.Error == "" {
		t.Fatalf("apply of a panicking plugin: %+v; want a failure", res)
	}
	t.Logf("the call failed with: %v %q", err, res.Error)
	mu.Lock()
	defer mu.Unlock()
	want := "error: plugin panicked: deliberate: t has 0 items at " + src
	if len(logged) != 1 || !strings.HasPrefix(logged[0], want) {
		t.Fatalf("logged %q; want one line starting with %q", logged, want)
	}
}
