// Command benchapply times whole ccm runs and, when given a CCM binary
// (-ref), the same runs of CCM, interleaved (ccm, CCM, ccm, CCM, ...) so
// that both see the same machine noise, and prints medians, spreads and
// ratios. scripts/bench-apply.sh builds ccm and runs it.
//
// Cases (-cases, comma-separated):
//
//	warm     stable apply of N file resources (cache warm, files in place)
//	converge first apply of N files (files absent; ccm's cache warm)
//	ensure   `ensure file` of one stable file
//	apply1   stable apply of a 1-resource manifest
//	cold     ccm builds only (and -ref when -ref-name is not CCM): first run
//	         of 1 file with an empty compilation cache
//	floor    the floor for warm: in this process, lstat, read and compare
//	         the N files with their desired content (what any tool must do),
//	         and for converge: create a temp file, write, fsync and rename
//	         it over each of N absent files, one at a time and 16 at a time
//
// Every run's CPU time (user + system) and peak RSS are recorded too
// (getrusage of the child), and each case's rows end with the 1-minute load
// average before and after it: on a shared machine the wall time is noise,
// the CPU time much less so. -ref-name names the reference in the table, so
// that two ccm builds can be compared (-ref /path/to/other/ccm -ref-name
// before).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type tool struct {
	name string
	bin  string
	ref  bool // CCM: ensure takes ENSURE and --owner user:group
}

type sample struct {
	wall time.Duration
	rss  int64         // KiB
	cpu  time.Duration // user + system
}

func main() {
	ccmBin := flag.String("ccm", "", "ccm binary (required)")
	refBin := flag.String("ref", "", "CCM binary to compare with (optional)")
	refName := flag.String("ref-name", "CCM", "name of the -ref tool in the table (another ccm build, say)")
	sizes := flag.String("n", "1,2000", "resource counts for warm and converge")
	runs := flag.Int("runs", 5, "timed runs per case and tool")
	cases := flag.String("cases", "floor,warm,ensure,apply1,cold,converge", "cases to run")
	work := flag.String("work", "", "work directory (default: a temp dir, removed)")
	flag.Parse()
	if *ccmBin == "" {
		fmt.Fprintln(os.Stderr, "benchapply: -ccm is required")
		os.Exit(2)
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "benchapply")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	tools := []tool{{name: "ccm", bin: abs(*ccmBin)}}
	if *refBin != "" {
		tools = append(tools, tool{name: *refName, bin: abs(*refBin), ref: true})
	}
	u, err := user.Current()
	check(err)
	g, err := user.LookupGroupId(u.Gid)
	check(err)
	b := &bench{dir: dir, tools: tools, runs: *runs, user: u.Username, group: g.Name}
	fmt.Printf("runs per case and tool: %d, interleaved; wall times are median [min–max] seconds, CPU (user+system) and peak RSS are medians; load is the 1-minute load average before and after the case\n\n", *runs)
	fmt.Printf("| case | tool | wall (s) | CPU (s) | peak RSS (MiB) | ratio ccm/%s: wall, CPU | load |\n", tools[len(tools)-1].name)
	fmt.Println("|---|---|---:|---:|---:|---:|---|")
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		ns = append(ns, n)
	}
	for _, c := range strings.Split(*cases, ",") {
		switch c {
		case "warm":
			for _, n := range ns {
				b.warm(n)
			}
		case "converge":
			for _, n := range ns {
				b.converge(n)
			}
		case "ensure":
			b.ensure()
		case "apply1":
			b.warmNamed("apply1", 1)
		case "cold":
			b.cold()
		case "floor":
			for _, n := range ns {
				b.floor(n)
			}
		default:
			fmt.Fprintf(os.Stderr, "benchapply: unknown case %q\n", c)
			os.Exit(2)
		}
	}
}

type bench struct {
	dir         string
	tools       []tool
	runs        int
	user, group string
}

// manifest writes a manifest of n files under files/ and returns its path;
// every resource spells out its properties (CCM has no defaults block).
func (b *bench) manifest(base string, n int) string {
	check(os.MkdirAll(filepath.Join(base, "files"), 0o755))
	var sb strings.Builder
	sb.WriteString("ccm:\n  resources:\n    - file:\n")
	for i := range n {
		fmt.Fprintf(&sb, "        - %s/files/f%d.txt:\n            ensure: present\n            owner: %s\n            group: %s\n            mode: \"0644\"\n            content: \"file %d\"\n",
			base, i, b.user, b.group, i)
	}
	p := filepath.Join(base, "manifest.yaml")
	check(os.WriteFile(p, []byte(sb.String()), 0o644))
	return p
}

// env is the environment of every case but cold: the cache is warmed by a
// run that compiles before it starts (CCM_BACKGROUND_COMPILE=0), so no
// background compile (docs/performance.md, "Cold start") runs alongside
// the measured runs.
func (b *bench) env(cache string) []string {
	return append(os.Environ(), "CCM_CACHE_DIR="+cache, "CCM_BACKGROUND_COMPILE=0")
}

// waitBackgroundCompile waits for the background compile a cold run
// started in cache to finish (it holds ccm-compile.lock until it exits),
// so that it neither runs into the next measurement nor outlives the
// benchmark's directory. Nothing to wait for when no run started one.
func waitBackgroundCompile(cache string) {
	f, err := os.Open(filepath.Join(cache, "ccm-compile.lock"))
	if err != nil {
		return
	}
	defer f.Close()
	check(syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
}

func run(env []string, bin string, args ...string) sample {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchapply: %s %s: %v\n%s", bin, strings.Join(args, " "), err, tail(out.String()))
		os.Exit(1)
	}
	if strings.Contains(out.String(), "failed") {
		fmt.Fprintf(os.Stderr, "benchapply: %s %s reported a failure:\n%s", bin, strings.Join(args, " "), tail(out.String()))
		os.Exit(1)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return sample{wall: wall, rss: rss, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

func tail(s string) string {
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

func (b *bench) applyArgs(t tool, manifest string) []string {
	return []string{"apply", manifest, "--no-report"}
}

// interleave runs each tool's prepare+measure once per round, round after
// round, and prints the table rows.
func (b *bench) interleave(name string, prep func(t tool, i int), measure func(t tool, i int) sample) {
	load0 := loadavg()
	res := make([][]sample, len(b.tools))
	for i := range b.runs {
		for j, t := range b.tools {
			if prep != nil {
				prep(t, i)
			}
			res[j] = append(res[j], measure(t, i))
		}
	}
	load := load0 + "–" + loadavg()
	var med, medCPU []time.Duration
	for j, t := range b.tools {
		ws := make([]time.Duration, 0, len(res[j]))
		cs := make([]time.Duration, 0, len(res[j]))
		rs := make([]int64, 0, len(res[j]))
		for _, s := range res[j] {
			ws = append(ws, s.wall)
			cs = append(cs, s.cpu)
			rs = append(rs, s.rss)
		}
		slices.Sort(ws)
		slices.Sort(cs)
		slices.Sort(rs)
		m := ws[len(ws)/2]
		med = append(med, m)
		medCPU = append(medCPU, cs[len(cs)/2])
		ratio := ""
		if j == 0 && len(b.tools) == 1 {
			ratio = "–"
		}
		fmt.Printf("| %s | %s | %.3f [%.3f–%.3f] | %.3f | %.1f | %s | %s |\n", name, t.name, m.Seconds(), ws[0].Seconds(), ws[len(ws)-1].Seconds(), cs[len(cs)/2].Seconds(), float64(rs[len(rs)/2])/1024, ratio, load)
	}
	if len(med) == 2 {
		fmt.Printf("| %s | ratio | | | | **%.2f×**, %.2f× | |\n", name, med[0].Seconds()/med[1].Seconds(), medCPU[0].Seconds()/medCPU[1].Seconds())
	}
}

func (b *bench) warm(n int) { b.warmNamed(fmt.Sprintf("warm stable apply, N=%d", n), n) }

func (b *bench) warmNamed(name string, n int) {
	manifests := map[string]string{}
	for _, t := range b.tools {
		base := filepath.Join(b.dir, fmt.Sprintf("warm-%s-%d", t.name, n))
		manifests[t.name] = b.manifest(base, n)
		run(b.env(filepath.Join(b.dir, "cache")), t.bin, b.applyArgs(t, manifests[t.name])...) // converge, warm the cache
	}
	b.interleave(name, nil, func(t tool, _ int) sample {
		return run(b.env(filepath.Join(b.dir, "cache")), t.bin, b.applyArgs(t, manifests[t.name])...)
	})
}

func (b *bench) converge(n int) {
	// ccm's compilation cache is warmed once; each run starts with no files.
	for _, t := range b.tools {
		m := b.manifest(filepath.Join(b.dir, "conv-warm-"+t.name), 1)
		run(b.env(filepath.Join(b.dir, "cache")), t.bin, b.applyArgs(t, m)...)
	}
	var manifests = map[string]string{}
	b.interleave(fmt.Sprintf("first converging apply, N=%d", n), func(t tool, i int) {
		base := filepath.Join(b.dir, fmt.Sprintf("conv-%s-%d-%d", t.name, n, i))
		manifests[t.name] = b.manifest(base, n)
	}, func(t tool, _ int) sample {
		return run(b.env(filepath.Join(b.dir, "cache")), t.bin, b.applyArgs(t, manifests[t.name])...)
	})
}

func (b *bench) ensure() {
	args := func(t tool) []string {
		p := filepath.Join(b.dir, "ensure-"+t.name+".txt")
		if t.ref {
			return []string{"ensure", "file", p, "present", "--content", "hello", "--owner", b.user + ":" + b.group, "--mode", "0644"}
		}
		return []string{"ensure", "file", p, "--content", "hello", "--owner", b.user + ":" + b.group, "--mode", "0644"}
	}
	env := b.env(filepath.Join(b.dir, "cache"))
	for _, t := range b.tools {
		run(env, t.bin, args(t)...)
	}
	b.interleave("`ensure file`, stable", nil, func(t tool, _ int) sample { return run(env, t.bin, args(t)...) })
}

func (b *bench) cold() {
	// ccm builds only (CCM compiles nothing): ccm, and the reference when
	// it is another ccm (-ref-name other than CCM).
	tools := b.tools
	b.tools = nil
	for _, t := range tools {
		if !t.ref || t.name != "CCM" {
			b.tools = append(b.tools, t)
		}
	}
	defer func() { b.tools = tools }()
	var manifest, cache string
	b.interleave("cold first run, 1 file, empty cache", func(t tool, i int) {
		base := filepath.Join(b.dir, fmt.Sprintf("cold-%s-%d", t.name, i))
		manifest = b.manifest(base, 1)
		cache = filepath.Join(base, "cache")
	}, func(t tool, _ int) sample {
		// The default environment: a cold run may interpret and leave the
		// compile to a background process, waited for after the measurement.
		s := run(append(os.Environ(), "CCM_CACHE_DIR="+cache), t.bin, b.applyArgs(t, manifest)...)
		waitBackgroundCompile(cache)
		return s
	})
}

func (b *bench) floor(n int) {
	base := filepath.Join(b.dir, fmt.Sprintf("floor-%d", n))
	b.manifest(base, n)
	for i := range n {
		check(os.WriteFile(filepath.Join(base, "files", fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d", i)), 0o644))
	}
	var ws []time.Duration
	for range b.runs {
		t0 := time.Now()
		for i := range n {
			p := filepath.Join(base, "files", fmt.Sprintf("f%d.txt", i))
			if _, err := os.Lstat(p); err != nil {
				check(err)
			}
			got, err := os.ReadFile(p)
			check(err)
			if string(got) != fmt.Sprintf("file %d", i) {
				check(fmt.Errorf("%s differs", p))
			}
		}
		ws = append(ws, time.Since(t0))
	}
	slices.Sort(ws)
	fmt.Printf("| floor: lstat + read + compare, N=%d | (in process) | %.3f [%.3f–%.3f] | | | | %s |\n", n, ws[len(ws)/2].Seconds(), ws[0].Seconds(), ws[len(ws)-1].Seconds(), loadavg())

	ws = ws[:0]
	for r := range b.runs {
		dir := filepath.Join(base, fmt.Sprintf("conv%d", r))
		check(os.MkdirAll(dir, 0o755))
		t0 := time.Now()
		for i := range n {
			writeDurable(dir, i)
		}
		d, err := os.Open(dir)
		check(err)
		check(d.Sync())
		check(d.Close())
		ws = append(ws, time.Since(t0))
	}
	slices.Sort(ws)
	fmt.Printf("| floor: create + write + fsync + rename, N=%d | (in process) | %.3f [%.3f–%.3f] | | | | %s |\n", n, ws[len(ws)/2].Seconds(), ws[0].Seconds(), ws[len(ws)-1].Seconds(), loadavg())
	ws = ws[:0]
	for r := range b.runs {
		dir := filepath.Join(base, fmt.Sprintf("convpar%d", r))
		check(os.MkdirAll(dir, 0o755))
		t0 := time.Now()
		next := make(chan int)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := range next {
					writeDurable(dir, i)
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		d, err := os.Open(dir)
		check(err)
		check(d.Sync())
		check(d.Close())
		ws = append(ws, time.Since(t0))
	}
	slices.Sort(ws)
	fmt.Printf("| floor: the same, 16 files at a time, N=%d | (in process) | %.3f [%.3f–%.3f] | | | | %s |\n", n, ws[len(ws)/2].Seconds(), ws[0].Seconds(), ws[len(ws)-1].Seconds(), loadavg())
}

// loadavg is the 1-minute load average ("?" where /proc/loadavg is not).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	check(err)
	return a
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchapply:", err)
		os.Exit(1)
	}
}

// writeDurable writes dir/f<i>.txt as a tool has to for a crash to leave
// no partial file: a temp file, its content, fsync, mode, rename.
func writeDurable(dir string, i int) {
	tmp := filepath.Join(dir, fmt.Sprintf(".f%d.txt.tmp", i))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	check(err)
	_, err = f.WriteString(fmt.Sprintf("file %d", i))
	check(err)
	check(f.Sync())
	check(f.Chmod(0o644))
	check(f.Close())
	check(os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("f%d.txt", i))))
}
