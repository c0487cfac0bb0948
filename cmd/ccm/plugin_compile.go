package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/plugins"
)

// coldMaxResources is the most resources of one built-in type a run may
// have for that type to be interpreted while it is not compiled yet
// (host/cold.go, docs/performance.md "Cold start"). Measured on 2 cores:
// the interpreter costs ~3.3 ms of CPU per resource and 0.25 s to load;
// the compile ~2.4 s of CPU spread over every core (0.85 s of wall time on
// 2, quiet). The interpreted run is the faster up to about
// (2.4 s / cores − 0.25 s) / 3.3 ms resources (290 on 2 cores, 100 on 4;
// less in practice, the compile's cores are not all busy all the time), so
// 200 / cores (100 on 2, 25 on 8, never below 10) keeps it ahead.
func coldMaxResources() int {
	return max(10, 200/runtime.GOMAXPROCS(0))
}

// backgroundCompileEnv turns the background compile off: CCM_BACKGROUND_COMPILE=0
// makes every run compile what it needs before it starts, as ccm did
// before (docs/performance.md).
const backgroundCompileEnv = "CCM_BACKGROUND_COMPILE"

// coldStart is the plugin host's cold-start option: interpret small runs'
// built-ins that are not compiled yet and compile them in a detached
// background process, unless CCM_BACKGROUND_COMPILE=0.
func coldStart() host.Option {
	if os.Getenv(backgroundCompileEnv) == "0" {
		return host.WithColdStart(host.ColdStart{})
	}
	return host.WithColdStart(host.ColdStart{
		MaxResources: coldMaxResources(),
		Background:   startBackgroundCompile,
		Interpreted: func(types []string) {
			if logDebug {
				fmt.Fprintf(os.Stderr, "ccm: debug: built-in plugins interpreted in this run, not compiled yet: %s (compiling them in the background; `ccm plugin compile` does it ahead)\n", strings.Join(types, ", "))
			}
		},
	})
}

// startBackgroundCompile starts `ccm plugin compile --background TYPES` as
// a detached process: its own session (no terminal's signals reach it),
// stdio on /dev/null, nice 19 (it sets that itself), holding lock (fd 3)
// until it exits so no second one starts. The run does not wait for it.
func startBackgroundCompile(types []string, lock *os.File) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{"plugin", "compile", "--background", "--"}, types...)...)
	cmd.Env = childEnv(os.Environ())
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped if this process lives on (agent, pipe)
	return nil
}

func newPluginCompileCommand() *cobra.Command {
	var background bool
	cmd := &cobra.Command{
		Use:   "compile [TYPE...]",
		Short: "Compile plugins into the compilation cache ahead of their first run",
		Long: `Compile compiles the plugins of the named types (every built-in and
operator-installed type when none is named) into the compilation cache
($CCM_CACHE_DIR, else /var/cache/ccm as root, else ~/.cache/ccm/wazero), so no
run has to. Run it when building an image or after installing ccm.

Without it, the first run that needs a built-in type that is not compiled
yet and has few resources of it (at most 100 on 2 cores, 200 / the number
of cores in general) runs that type's plugin in an interpreter (slower per
resource, but with no compile to wait for) and starts this command in the
background, detached and at the lowest priority, to fill the cache for the
next run. CCM_BACKGROUND_COMPILE=0 turns that off:
every run then compiles what it needs first. See docs/performance.md.`,
		Example: `  # in an image build, after installing ccm
  ccm plugin compile

  # only the file type, into a given cache
  CCM_CACHE_DIR=/var/cache/ccm ccm plugin compile file`,
		RunE: func(cmd *cobra.Command, types []string) error {
			return pluginCompile(cmd, types, background)
		},
	}
	cmd.Flags().BoolVar(&background, "background", false, "run as the background compile a cold run starts (quiet, lowest priority)")
	_ = cmd.Flags().MarkHidden("background")
	return cmd
}

func pluginCompile(cmd *cobra.Command, types []string, background bool) error {
	if background {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := host.New(host.WithBuiltins(plugins.Modules()), host.WithPluginDirs(host.DefaultPluginDirs()...))
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("starting the plugin host: %w", err)}
	}
	defer h.Close(context.Background())
	if w := h.CacheWarning(); w != nil {
		if background {
			return nil // nowhere to put it
		}
		return &exitError{exitFailed, fmt.Errorf("%v; nothing compiled", w)}
	}
	if len(types) == 0 {
		types = h.Types()
	}
	failed := 0
	for _, typ := range types {
		start := time.Now()
		if err := h.Compile(ctx, []string{typ}); err != nil {
			failed++
			fmt.Fprintf(cmd.ErrOrStderr(), "ccm: %v\n", err)
			continue
		}
		if !background {
			fmt.Fprintf(cmd.OutOrStdout(), "%s: compiled in %.2fs\n", typ, time.Since(start).Seconds())
		}
	}
	if w := h.CacheWarning(); w != nil && !background {
		fmt.Fprintf(cmd.ErrOrStderr(), "ccm: warning: %v\n", w)
	}
	if failed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d plugins did not compile", failed, len(types))}
	}
	return nil
}

// childEnv is environ without profileEnv: the background compile must not
// overwrite this run's profiles or trace.
func childEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(profileEnv, name) {
			env = append(env, kv)
		}
	}
	return env
}
