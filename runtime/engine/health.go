package engine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// defaultCheckPath is the PATH health-check commands are looked up in.
const defaultCheckPath = "PATH=/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"

// healthChecks runs the resource's Nagios-style checks (docs/manifests.md)
// through the host's grant-checked exec. CRITICAL and UNKNOWN fail the
// resource; WARNING is recorded and does not.
func (e *Engine) healthChecks(ctx context.Context, s scope, p *plan, r *resource, ev *session.Event) {
	for _, hc := range r.src.HealthChecks {
		start := time.Now()
		res := e.healthCheck(ctx, s, p, r, hc)
		res.Duration = time.Since(start)
		ev.HealthCheck = append(ev.HealthCheck, res)
		if res.Status == session.HealthCritical || res.Status == session.HealthUnknown {
			ev.Fail(fmt.Sprintf("health check %s: %s: %s", res.Name, res.Status, strings.TrimSpace(res.Output)))
		}
	}
}

func (e *Engine) healthCheck(ctx context.Context, s scope, p *plan, r *resource, hc manifest.HealthCheck) session.HealthCheckResult {
	res := session.HealthCheckResult{Name: hc.Name, Status: session.HealthUnknown}
	command, err := p.x.String(hc.Command)
	if err != nil {
		res.Output = p.line(r) + ": template: " + err.Error()
		return res
	}
	argv, err := shellwords.Split(command)
	if err != nil || len(argv) == 0 {
		res.Output = fmt.Sprintf("cannot parse command %q: %v", command, err)
		return res
	}
	if res.Name == "" {
		res.Name = path.Base(argv[0])
	}
	caller := e.caller(s, p, r)
	tries := max(hc.Tries, 1)
	defer e.step("", "")
	for try := 1; try <= tries; try++ {
		res.Tries = try
		e.step(r.ref(), fmt.Sprintf("health check %s, try %d/%d", res.Name, try, tries))
		out, err := e.opts.Plugins.Exec(ctx, caller, abi.ExecRequest{
			Argv:      argv,
			Env:       []string{defaultCheckPath, "LANG=C", "LC_ALL=C"},
			Cwd:       "/",
			TimeoutMS: hc.Timeout.Milliseconds(),
			Probe:     true,
		})
		var ce *abi.CallError
		switch {
		case errors.As(err, &ce) && (ce.Code == abi.CodeNotFound || ce.Code == abi.CodeDenied || ce.Code == abi.CodeInvalid):
			// A missing or refused program stays so: no retries.
			res.Status, res.Output = session.HealthUnknown, err.Error()+" (not retried)"
			return res
		case err != nil:
			res.Status, res.Output = session.HealthUnknown, err.Error()
		case out.TimedOut:
			res.Status, res.Output = session.HealthUnknown, fmt.Sprintf("timed out after %s", hc.Timeout)
		default:
			res.Status, res.Output = nagiosStatus(out.ExitCode), strings.TrimSpace(out.Stdout)
		}
		if res.Status == session.HealthOK || try == tries {
			break
		}
		e.step(r.ref(), fmt.Sprintf("health check %s was %s, waiting %s before try %d/%d", res.Name, res.Status, hc.TrySleep, try+1, tries))
		if !sleep(ctx, hc.TrySleep) {
			break
		}
	}
	return res
}

func nagiosStatus(code int) string {
	switch code {
	case 0:
		return session.HealthOK
	case 1:
		return session.HealthWarning
	case 2:
		return session.HealthCritical
	}
	return session.HealthUnknown
}

// sleep waits d or until ctx ends; it reports whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
