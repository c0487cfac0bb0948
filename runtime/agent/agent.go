package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Results are published to ResultSubject(node) in ResultStream, which keeps
// the last ResultsPerNode results of each node for ResultTTL.
const (
	ResultStream    = "CCM_RESULTS"
	ResultPrefix    = "ccm.agent.result."
	ResultsPerNode  = 10
	ResultTTL       = 7 * 24 * time.Hour
	publishDeadline = 5 * time.Second
)

// ErrReload is Loop's answer to Reload.
var ErrReload = errors.New("reload requested")

// ResultSubject is the subject of node's run results.
func ResultSubject(node string) string { return ResultPrefix + node }

// RunFunc applies one manifest source and returns the engine's result; an
// error means the source could not be loaded and nothing was applied.
type RunFunc func(ctx context.Context, manifest string) (*engine.Result, error)

// Agent converges its manifests on an interval and on source changes.
type Agent struct {
	Node      string
	Manifests []string
	Interval  time.Duration
	Jitter    time.Duration // each wait is Interval plus up to Jitter
	Run       RunFunc

	// HealthInterval, when positive, runs Check (a health-check-only run,
	// --monitor-only) of every manifest that often; a manifest whose check
	// fails or is CRITICAL gets a remediation run at once.
	HealthInterval time.Duration
	Check          RunFunc

	// Digest, when set, gives the sha256 of the bundle the run just
	// finished used for a remote manifest ("" for a local one).
	Digest func(manifest string) string

	// Conn, when set, is used to publish results (JS) and to hear about
	// changes of obj:// sources. nil: no NATS at all.
	Conn *nats.Conn
	JS   jetstream.JetStream

	// Log receives one line per event (start, result, publish failure).
	Log func(format string, args ...any)

	// After is the clock: nil means time.After. Tests pass their own.
	After func(time.Duration) <-chan time.Time

	// HeartbeatEvery, when positive and JS is set, publishes a Heartbeat
	// that often, independently of runs.
	HeartbeatEvery time.Duration

	// Metrics, when set, are updated after every run.
	Metrics *Metrics

	// Reload, when it delivers, makes Loop return ErrReload between runs.
	Reload <-chan struct{}

	wake     chan string
	streamOK bool // the results stream was created or updated
}

// Result is one run of one manifest as published to ResultSubject(Node).
type Result struct {
	Node       string           `json:"node"`
	Manifest   string           `json:"manifest"`
	Digest     string           `json:"bundle_sha256,omitempty"`
	Reason     string           `json:"reason"` // "start", "interval" or "changed: SOURCE"
	Started    time.Time        `json:"started"`
	Duration   time.Duration    `json:"duration_ns"`
	Summary    *session.Summary `json:"summary,omitempty"`
	Failed     []FailedResource `json:"failed,omitempty"`
	Error      string           `json:"error,omitempty"` // the source could not be loaded: nothing applied
	Interrupt  string           `json:"interrupted,omitempty"`
	Successful bool             `json:"successful"`
}

// FailedResource names a resource that failed and why.
type FailedResource struct {
	Resource string   `json:"resource"`
	Messages []string `json:"messages,omitempty"`
}

func (a *Agent) logf(format string, args ...any) {
	if a.Log != nil {
		a.Log(format, args...)
	}
}

// EnsureStream creates or updates the results stream.
func EnsureStream(ctx context.Context, js jetstream.JetStream) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              ResultStream,
		Description:       "ccm agent run results, the last few per node",
		Subjects:          []string{ResultPrefix + ">"},
		MaxMsgsPerSubject: ResultsPerNode,
		MaxAge:            ResultTTL,
		AllowDirect:       true,
		Discard:           jetstream.DiscardOld,
	})
	if err != nil {
		return fmt.Errorf("results stream %s: %w", ResultStream, err)
	}
	return nil
}

// Loop runs every manifest now, then again after each interval (plus
// jitter) or as soon as a watched source changes, until ctx ends. A change
// heard while a run is going on causes one more run after it: bursts
// coalesce. Loop returns nil when ctx ends, ErrReload when Reload delivers.
func (a *Agent) Loop(ctx context.Context) error {
	a.wake = make(chan string, 1)
	subs, err := a.watch()
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	if a.JS != nil && a.HeartbeatEvery > 0 {
		bctx, stopBeat := context.WithCancel(ctx)
		beating := make(chan struct{})
		go func() { defer close(beating); a.beat(bctx, a.HeartbeatEvery) }()
		defer func() { stopBeat(); <-beating }()
	}
	after := a.After
	if after == nil {
		after = time.After
	}
	reason := "start"
	var timer, health <-chan time.Time
	due := true // a full run is due
	for {
		if due {
			a.Once(ctx, reason)
			if ctx.Err() != nil {
				return nil
			}
			wait := a.Interval
			if a.Jitter > 0 {
				wait += rand.N(a.Jitter)
			}
			timer = after(wait)
		}
		if health == nil && a.HealthInterval > 0 && a.Check != nil {
			health = after(a.HealthInterval)
		}
		due = true
		select {
		case <-ctx.Done():
			return nil
		case <-timer:
			reason = "interval"
		case src := <-a.wake:
			reason = "changed: " + src
		case <-a.Reload:
			return ErrReload
		case <-health:
			health = nil
			due = false
			a.remediate(ctx)
			if ctx.Err() != nil {
				return nil
			}
		}
	}
}

// remediate checks every manifest's health and re-applies those whose
// check failed or was CRITICAL.
func (a *Agent) remediate(ctx context.Context) {
	for _, m := range a.Manifests {
		if ctx.Err() != nil {
			return
		}
		res, err := a.Check(ctx, m)
		var why string
		switch {
		case err != nil:
			why = "health check could not run: " + err.Error()
		case res.Summary.ChecksCritical > 0:
			why = fmt.Sprintf("%d health checks CRITICAL", res.Summary.ChecksCritical)
		case res.Failed():
			why = fmt.Sprintf("%d health checks failed", res.Summary.Failed)
		default:
			continue
		}
		a.logf("%s: %s: remediating", m, why)
		a.Metrics.remediated(m)
		a.publish(ctx, a.runOne(ctx, m, "remediation: "+why))
	}
}

// watch subscribes, with plain core NATS subscriptions (no JetStream
// consumer, so thousands of agents cost the stream nothing), to the
// metadata subject of each obj:// source: the object store writes there
// whenever the object is replaced or deleted.
func (a *Agent) watch() ([]*nats.Subscription, error) {
	if a.Conn == nil {
		return nil, nil
	}
	var subs []*nats.Subscription
	for _, m := range a.Manifests {
		if !strings.HasPrefix(m, "obj://") {
			continue
		}
		ref, err := source.Parse(m)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", m, err)
		}
		subj := ObjectMetaSubject(ref.Bucket, ref.Key)
		src := m
		sub, err := a.Conn.Subscribe(subj, func(*nats.Msg) {
			select {
			case a.wake <- src:
			default: // a run is already due: coalesce
			}
		})
		if err != nil {
			return nil, fmt.Errorf("watching %s on %s: %w", m, subj, err)
		}
		subs = append(subs, sub)
	}
	if len(subs) > 0 {
		// While NATS is down the subscriptions are sent on reconnection.
		if !a.Conn.IsConnected() {
			a.logf("NATS is not reachable now; obj:// sources are watched once it is")
		} else if err := a.Conn.FlushTimeout(publishDeadline); err != nil {
			a.logf("watching obj:// sources: %v; they are watched once NATS is reachable", err)
		}
	}
	return subs, nil
}

// ObjectMetaSubject is the subject on which a JetStream object store
// publishes KEY's metadata in BUCKET (nats.go's object store layout).
func ObjectMetaSubject(bucket, key string) string {
	return "$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(key))
}

// Once runs every manifest once, in order, and publishes each result.
func (a *Agent) Once(ctx context.Context, reason string) []Result {
	var out []Result
	for _, m := range a.Manifests {
		if ctx.Err() != nil {
			break
		}
		r := a.runOne(ctx, m, reason)
		a.publish(ctx, r)
		out = append(out, r)
	}
	return out
}

func (a *Agent) runOne(ctx context.Context, manifest, reason string) Result {
	r := Result{Node: a.Node, Manifest: manifest, Reason: reason, Started: time.Now().UTC()}
	a.logf("run of %s (%s)", manifest, reason)
	res, err := a.Run(ctx, manifest)
	r.Duration = time.Since(r.Started)
	defer func() { a.Metrics.observe(r) }()
	if a.Digest != nil {
		r.Digest = a.Digest(manifest)
	}
	if err != nil {
		r.Error = err.Error()
		a.logf("run of %s: nothing applied: %v", manifest, err)
		return r
	}
	r.Summary = &res.Summary
	for _, ev := range res.Events {
		if ev.Failed {
			r.Failed = append(r.Failed, FailedResource{Resource: ev.Type + "#" + ev.Name, Messages: ev.Error})
		}
	}
	if res.Interrupted != nil {
		r.Interrupt = res.Interrupted.Error()
	}
	r.Successful = !res.Failed() && res.Interrupted == nil
	a.logf("run of %s: %d resources, %d changed, %d failed in %s", manifest, res.Summary.Total, res.Summary.Changed, res.Summary.Failed, r.Duration.Round(time.Millisecond))
	return r
}

// publish sends r to JetStream; a failure is logged, never fatal: the next
// run publishes again.
func (a *Agent) publish(ctx context.Context, r Result) {
	if a.JS == nil {
		return
	}
	if a.Conn != nil && !a.Conn.IsConnected() {
		a.logf("result of %s not published: NATS is not reachable now", r.Manifest)
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		a.logf("result of %s not published: %v", r.Manifest, err)
		return
	}
	// A run ended by a signal still reports: publish on a fresh deadline.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishDeadline)
	defer cancel()
	if !a.streamOK {
		if err := EnsureStream(pctx, a.JS); err != nil {
			a.logf("result of %s not published: %v", r.Manifest, err)
			return
		}
		a.streamOK = true
	}
	if _, err := a.JS.Publish(pctx, ResultSubject(a.Node), b); err != nil {
		a.logf("result of %s not published to %s: %v", r.Manifest, ResultSubject(a.Node), err)
	}
}
