// Command hostile is a fixture plugin that attacks its host, one attack per
// resource, chosen by the "attack" property. It is written against the raw
// Extism ABI, without the SDK, as a hostile vendor would: its exports set
// their output themselves, and it imports the kernel and the host calls
// directly, so it can hand the host bogus offsets, lengths and documents.
// cmd/ccm/hostile_e2e_test.go runs every attack through the ccm binary under
// a narrow grant and checks that each fails on its own with a message naming
// what was refused, and that nothing outside the grant changed. The table of
// attacks and outcomes is in docs/security.md ("Hostile plugins").
//
// Properties besides "attack": "path" (the file an attack goes for), "dir"
// (the granted work directory), "argv" (a command line) and "count".
//
// Rebuild hostile.wasm with: go generate ./testdata/plugins/...
package main

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o hostile.wasm .

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// main is never called in a c-shared wasm module; it exists so the package
// also builds natively.
func main() {}

// info asks for everything: the grant is what must stop it.
var info = abi.PluginInfo{
	ABI:           abi.Version,
	Type:          "hostile",
	Version:       "1.0.0",
	Providers:     []string{"evil"},
	Ensure:        []string{"present"},
	DefaultEnsure: "present",
	Capabilities: abi.Capabilities{
		FSRead:  []string{"/**"},
		FSWrite: []string{"/**"},
		Exec:    []string{"/**"},
		Net:     []string{"*"},
		Users:   true,
	},
}

// attacks maps the "attack" property to what the plugin does. Each returns
// the resource's error (the host's refusal, passed on), or "" when the
// attack did nothing the plugin could notice.
var attacks = map[string]func(p props) string{
	"read_outside":         readOutside,
	"write_dotdot":         writeFile,
	"write_symlink_parent": writeFile,
	"chmod_symlink":        chmodSymlink,
	"exec_ungranted":       execArgv,
	"exec_injection":       execInjection,
	"exec_path_hijack":     execPathHijack,
	"infinite_loop":        func(props) string { spin(); return "" },
	"alloc_4gib":           alloc4GiB,
	"output_100mib":        output100MiB,
	"panic":                func(props) string { panic("hostile plugin panics on purpose") },
	"trap":                 func(props) string { trap(); return "" },
	"exit":                 func(props) string { exit(0); return "" },
	"exit_after_output":    exitAfterOutput,
	"malformed_json":       func(props) string { setRawOutput([]byte(`{"changed": tru`)); return skipOutput },
	"output_bad_offset":    func(props) string { outputSet(0xFFFF_FFF0, 1<<30); return skipOutput },
	"hostcall_bad_offsets": badOffsets,
	"hostcall_flood":       flood,
	"wasi_files":           wasiFiles,
	"wasi_env":             wasiEnv,
	"wasi_sockets":         wasiSockets,
	"stash":                stash,
	"leak_stash":           leakStash,
	// Attacks on the other exports: ccm_validate and ccm_status act on
	// them (validateAttack, statusAttack); ccm_apply does nothing.
	"validate_spin":          func(props) string { return "" },
	"validate_output_100mib": func(props) string { return "" },
	"validate_alloc_4gib":    func(props) string { return "" },
	"status_spin":            func(props) string { return "" },
	"status_output_100mib":   func(props) string { return "" },
}

// describeAttack chooses what ccm_describe does, which has no input to
// choose it by: tests patch these 16 bytes of hostile.wasm to
// "describe:spin___" (loop forever), "describe:output_" (a 100 MiB output)
// or "describe:alloc__" (allocate 4 GiB); the patched module is another
// plugin with another sha256. Anything else describes normally.
var describeAttack = "describe:none___"

// skipOutput tells apply that the attack set the export's output itself.
const skipOutput = "\x00skip"

type props map[string]any

func (p props) str(k string) string { s, _ := p[k].(string); return s }

func (p props) strs(k string) []string {
	l, _ := p[k].([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

func describe() []byte {
	switch describeAttack {
	case "describe:spin___":
		spin()
	case "describe:output_":
		output100MiB(nil)
		return nil
	case "describe:alloc__":
		alloc4GiB(nil)
	}
	b, _ := json.Marshal(info)
	return b
}

func validate(input []byte) []byte {
	var req abi.ValidateRequest
	if err := json.Unmarshal(input, &req); err != nil {
		return []byte(`{"errors":["decode: ` + err.Error() + `"]}`)
	}
	switch props(req.Properties).str("attack") {
	case "validate_spin":
		spin()
	case "validate_output_100mib":
		output100MiB(nil)
		return nil
	case "validate_alloc_4gib":
		alloc4GiB(nil)
	}
	errs := []string{}
	if _, ok := attacks[props(req.Properties).str("attack")]; !ok {
		errs = append(errs, fmt.Sprintf("unknown attack %q", req.Properties["attack"]))
	}
	b, _ := json.Marshal(abi.ValidateResponse{Errors: errs})
	return b
}

func status(input []byte) []byte {
	var req abi.Request
	_ = json.Unmarshal(input, &req)
	switch props(req.Properties).str("attack") {
	case "status_spin":
		spin()
	case "status_output_100mib":
		output100MiB(nil)
		return nil
	}
	return []byte(`{"state":{}}`)
}

// apply runs the attack; it returns nil when the attack set the output.
func apply(input []byte) []byte {
	var req abi.Request
	if err := json.Unmarshal(input, &req); err != nil {
		return result(abi.Result{Error: "decode request: " + err.Error()})
	}
	p := props(req.Properties)
	msg := attacks[p.str("attack")](p)
	if msg == skipOutput {
		return nil
	}
	if msg == "" {
		return result(abi.Result{Changed: true, FinalEnsure: "present"})
	}
	return result(abi.Result{Error: msg})
}

func result(r abi.Result) []byte {
	b, _ := json.Marshal(r)
	return b
}

// callErr renders a host-call answer's error, or "" for success.
func callErr(call string, resp abi.Response, err error) string {
	if err != nil {
		return call + ": " + err.Error()
	}
	if resp.Error != nil {
		return call + ": " + resp.Error.Code + ": " + resp.Error.Message
	}
	return ""
}

func readOutside(p props) string {
	resp, err := hostCall(abi.CallFSRead, abi.FSReadRequest{Path: p.str("path")})
	if e := callErr(abi.CallFSRead, resp, err); e != "" {
		return e
	}
	return "read " + p.str("path") + ": " + string(resp.Ok)
}

// writeFile writes "pwned" to path (a ".." path, or one through a symlinked
// directory).
func writeFile(p props) string {
	resp, err := hostCall(abi.CallFSWrite, abi.FSWriteRequest{Path: p.str("path"), Content: []byte("pwned\n"), Mode: 0o666})
	return callErr(abi.CallFSWrite, resp, err)
}

// chmodSymlink chmods a symlink in the granted directory whose target is
// outside, hoping the host follows it.
func chmodSymlink(p props) string {
	resp, err := hostCall(abi.CallFSChmod, abi.FSChmodRequest{Path: p.str("path"), Mode: 0o777})
	if e := callErr(abi.CallFSChmod, resp, err); e != "" {
		return e
	}
	return ""
}

func execArgv(p props) string {
	resp, err := hostCall(abi.CallExec, abi.ExecRequest{Argv: p.strs("argv")})
	if e := callErr(abi.CallExec, resp, err); e != "" {
		return e
	}
	return "exec ran: " + string(resp.Ok)
}

// execInjection runs the granted program with arguments a shell would act
// on, then asks for a shell outright. Without a shell the arguments are
// inert; the shell is not granted.
func execInjection(p props) string {
	target := p.str("path")
	argv := append(p.strs("argv"),
		"; touch "+target, "$(touch "+target+")", "`touch "+target+"`", "| touch "+target, "&& touch "+target, "\n touch "+target)
	resp, err := hostCall(abi.CallExec, abi.ExecRequest{Argv: argv})
	if e := callErr(abi.CallExec, resp, err); e != "" {
		return e
	}
	var out abi.ExecResponse
	_ = json.Unmarshal(resp.Ok, &out)
	resp, err = hostCall(abi.CallExec, abi.ExecRequest{Shell: true, Command: strings.Join(p.strs("argv"), " ") + "; touch " + target})
	if e := callErr(abi.CallExec, resp, err); e != "" {
		return fmt.Sprintf("argv ran inert (exit %d, stdout %q); shell: %s", out.ExitCode, out.Stdout, e)
	}
	return "shell ran: " + string(resp.Ok)
}

// execPathHijack plants an executable named like the granted program in the
// granted directory and runs the bare name with PATH pointing there.
func execPathHijack(p props) string {
	dir := p.str("dir")
	fake := dir + "/" + p.strs("argv")[0]
	script := "#!/bin/sh\ntouch " + p.str("path") + "\n"
	resp, err := hostCall(abi.CallFSWrite, abi.FSWriteRequest{Path: fake, Content: []byte(script), Mode: 0o755})
	if e := callErr(abi.CallFSWrite, resp, err); e != "" {
		return e
	}
	resp, err = hostCall(abi.CallExec, abi.ExecRequest{Argv: p.strs("argv"), Env: []string{"PATH=" + dir}})
	if e := callErr(abi.CallExec, resp, err); e != "" {
		return e
	}
	return "hijacked exec ran: " + string(resp.Ok)
}

// exitAfterOutput sets a valid result, then ends the module with
// proc_exit(0): the call looks like a success, and the instance is dead for
// the next resource.
func exitAfterOutput(props) string {
	setRawOutput(result(abi.Result{Changed: true, FinalEnsure: "present", Messages: []string{"exited after its output"}}))
	exit(0)
	return skipOutput
}

// spin loops forever without calling anything.
func spin() {
	n := 0
	for {
		n++
	}
}

var hoard [][]byte

// alloc4GiB asks for 4 GiB at once, the whole wasm32 address space.
func alloc4GiB(props) string {
	b := make([]byte, 4<<30)
	b[len(b)-1] = 1
	hoard = append(hoard, b)
	return fmt.Sprintf("allocated %d bytes", len(b))
}

// output100MiB sets an output of 100 MiB (a kernel block, left zeroed).
func output100MiB(props) string {
	n := uint64(100 << 20)
	outputSet(kernelAlloc(n), n)
	return skipOutput
}

// badOffsets makes host calls with request offsets that are not blocks:
// zero, past the end of memory, mid-block, and with the stdio transport's
// marker although the call is not on it. Each must come back as an error
// response (or 0), never as a trap or a served request.
func badOffsets(props) string {
	req := writeBlock([]byte(`{"path":"/etc/passwd"}`))
	offsets := []uint64{0, 1, 7, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF, 1 << 63, req + 3, req + 1<<30, abi.StdioCall | 1<<40, abi.StdioCall | 5}
	var msgs []string
	for _, off := range offsets {
		r := rawFSRead(off)
		if r == 0 {
			msgs = append(msgs, fmt.Sprintf("%#x: no answer", off))
			continue
		}
		var resp abi.Response
		if err := json.Unmarshal(readBlock(r), &resp); err != nil {
			msgs = append(msgs, fmt.Sprintf("%#x: bad answer: %v", off, err))
			continue
		}
		if resp.Error == nil {
			msgs = append(msgs, fmt.Sprintf("%#x: SERVED: %.80s", off, resp.Ok))
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%#x: %s: %s", off, resp.Error.Code, resp.Error.Message))
	}
	// A response offset the guest then reads past: the kernel's own bounds.
	return "bad offsets: " + strings.Join(msgs, "; ")
}

// flood makes count cheap host calls (ccm_log of one byte, the same block
// each time) and reports how many it got answered.
func flood(p props) string {
	count, _ := p["count"].(float64)
	req := writeBlock([]byte(`{"level":"debug","message":"x"}`))
	refused := 0
	for i := 0; i < int(count); i++ {
		r := rawLog(req)
		if r == 0 {
			refused++
			continue
		}
		// Peek at the first byte: {"ok" or {"error".
		if kernelLoadU8(r+2) == 'e' {
			refused++
		}
	}
	return fmt.Sprintf("made %d host calls, %d refused", int(count), refused)
}

// wasiFiles tries plain WASI file access: the module has no preopened
// directories, so every path must fail.
func wasiFiles(p props) string {
	var found []string
	for _, path := range []string{p.str("path"), "/etc/passwd", "/", ".", "/proc/self/environ"} {
		if _, err := os.ReadFile(path); err == nil {
			found = append(found, "read "+path)
		}
		if _, err := os.ReadDir(path); err == nil {
			found = append(found, "listed "+path)
		}
		if err := os.WriteFile(path+".pwned", []byte("x"), 0o666); err == nil {
			found = append(found, "wrote "+path+".pwned")
		}
	}
	if n := preopens(); n > 0 {
		found = append(found, fmt.Sprintf("%d preopened directories", n))
	}
	if len(found) > 0 {
		return "WASI LEAK: " + strings.Join(found, ", ")
	}
	return "wasi: no file reachable: no preopened directory, every open failed"
}

func wasiEnv(props) string {
	env := os.Environ()
	if len(env) > 0 {
		return "WASI LEAK: environment: " + strings.Join(env, " ")
	}
	if len(os.Args) > 1 {
		return "WASI LEAK: arguments: " + strings.Join(os.Args, " ")
	}
	return fmt.Sprintf("wasi: environment has %d variables, arguments %q", len(env), os.Args)
}

func wasiSockets(p props) string {
	var found []string
	if c, err := net.Dial("tcp", p.str("path")); err == nil {
		c.Close()
		found = append(found, "dialed "+p.str("path"))
	}
	for fd := int32(0); fd < 16; fd++ {
		if errno := sockAccept(fd); errno == 0 {
			found = append(found, fmt.Sprintf("accepted on fd %d", fd))
		}
	}
	if len(found) > 0 {
		return "WASI LEAK: " + strings.Join(found, ", ")
	}
	return "wasi: no socket: dial and sock_accept on fds 0-15 failed"
}

var errNoAnswer = errors.New("the host gave no answer (offset 0)")

// stashed is what stash read: it lives in the instance's memory.
var stashed string

// stash reads path (granted to its scope) and keeps the content in a
// global, for leak_stash to write out in another scope.
func stash(p props) string {
	resp, err := hostCall(abi.CallFSRead, abi.FSReadRequest{Path: p.str("path")})
	if e := callErr(abi.CallFSRead, resp, err); e != "" {
		return e
	}
	var out abi.FSReadResponse
	_ = json.Unmarshal(resp.Ok, &out)
	stashed = string(out.Content)
	return ""
}

// leakStash writes whatever an earlier stash kept to path (granted to its
// scope): the secret crosses scopes if the two share an instance.
func leakStash(p props) string {
	resp, err := hostCall(abi.CallFSWrite, abi.FSWriteRequest{Path: p.str("path"), Content: []byte("stashed:" + stashed), Mode: 0o644})
	return callErr(abi.CallFSWrite, resp, err)
}
