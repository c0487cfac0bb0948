package hostcall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
	"golang.org/x/sys/unix"
)

// BenchmarkExecChecks is what the exec rules add to each exec (resolve
// and open the program, read its #! line, match the grant, check each
// environment entry, mark descriptors close-on-exec), against
// host.BenchmarkExecTrue, a whole exec of /bin/true through Host.Exec.
func BenchmarkExecChecks(b *testing.B) {
	st := &State{Caller: trust.Caller{Grants: trust.Chain{trust.All()}}, HostCalls: true}
	req := abi.ExecRequest{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}}
	for b.Loop() {
		prog, cerr := openProgram("true", envPath(req.Env))
		if cerr != nil {
			b.Fatal(cerr)
		}
		if cerr := allowed(st, access{call: abi.CallExec, path: "true", target: prog.path, exec: &req}); cerr != nil {
			b.Fatal(cerr)
		}
		if cerr := prog.openInterp(); cerr != nil {
			b.Fatal(cerr)
		}
		for _, kv := range req.Env {
			if r := st.Caller.Grants.EnvAllowed(kv); r != "" {
				b.Fatal(r)
			}
		}
		closeOnExecAbove2()
		prog.close()
	}
}

// BenchmarkPendingWrite is one new file's pending write (checked, filled,
// fsynced in the background, renamed; its directory synced once per 256),
// filled unnamed (O_TMPFILE) and under its temp name, interleaved with
// -count. cpu-ns/op is the process's user + system time per write: the
// disk's waits are not in it.
func BenchmarkPendingWrite(b *testing.B) {
	for _, m := range fillModes {
		b.Run(m.name, func(b *testing.B) {
			dir := tempDir(b)
			caller := trust.Caller{Grants: grantDir(b, dir)}
			st := directState(caller)
			st.Caps = &abi.Capabilities{FSRead: []string{"/**"}, FSWrite: []string{"/**"}}
			content := []byte("file content\n")
			settle := func() {
				if err := st.Pending.Settle(st); err != nil {
					b.Fatal(err)
				}
				st.Dirs.SyncAll()
			}
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				if i%256 == 0 {
					if i > 0 {
						settle()
					}
					st.Dirs, st.Pending = &DirSyncs{}, &Pending{named: m.named}
					if err := os.Mkdir(filepath.Join(dir, fmt.Sprint(i)), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				p := filepath.Join(dir, fmt.Sprint(i-i%256), fmt.Sprintf("f%d", i))
				if _, cerr := fsWrite(context.Background(), st, abi.FSWriteRequest{Path: p, Content: content, Mode: 0o644, Owner: "root", Group: "root"}); cerr != nil {
					b.Fatal(cerr)
				}
				i++
			}
			settle()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() int64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
