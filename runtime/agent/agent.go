package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
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

	// Cached, when set, lists the sources the run just finished took from
	// the last-good cache because they were unreachable (source.Fallbacks).
	Cached func(manifest string) []source.Fallback

	// PollInterval, when positive, polls every http(s) manifest that often
	// with a conditional GET (source.HTTPWatch); a change wakes a run.
	// HTTPClient is used for it (nil: the default client).
	PollInterval time.Duration
	HTTPClient   *http.Client

	// QueueSize bounds the results kept while they cannot be published
	// (NATS down); the oldest is dropped when it is full. Zero:
	// DefaultQueue.
	QueueSize int

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

	wake chan string

	dmu     sync.Mutex
	digests map[string]string // manifest: bundle digest of its last run

	pmu      sync.Mutex // guards the results queue and its publishing
	queue    []Result   // results not yet published, oldest first
	dropped  uint64     // results dropped from the full queue since start
	streamOK bool       // the results stream was created or updated
}

// DefaultQueue is how many results an agent keeps while NATS is down.
const DefaultQueue = 100

// Result is one run of one manifest as published to ResultSubject(Node).
type Result struct {
	Node     string           `json:"node"`
	Manifest string           `json:"manifest"`
	Digest   string           `json:"bundle_sha256,omitempty"`
	Reason   string           `json:"reason"` // "start", "interval" or "changed: SOURCE"
	Started  time.Time        `json:"started"`
	Duration time.Duration    `json:"duration_ns"`
	Summary  *session.Summary `json:"summary,omitempty"`
	Failed   []FailedResource `json:"failed,omitempty"`
	Error    string           `json:"error,omitempty"` // the source could not be loaded: nothing applied
	// Source is "cache" when a source was unreachable and the run used the
	// last-good copy of it (Cached says which, why and how old), else "".
	Source string            `json:"source,omitempty"`
	Cached []source.Fallback `json:"cached,omitempty"`
	// ResultsDropped counts the results this agent dropped, since it
	// started, because NATS was unreachable longer than its queue lasts.
	ResultsDropped uint64 `json:"results_dropped,omitempty"`
	Interrupt      string `json:"interrupted,omitempty"`
	Successful     bool   `json:"successful"`
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
	if a.PollInterval > 0 {
		pctx, stopPoll := context.WithCancel(ctx)
		polling := a.poll(pctx)
		defer func() { stopPoll(); polling.Wait() }()
	}
	if a.Conn != nil {
		// Once NATS is back: results queued while it was down go out, and
		// obj:// changes published meanwhile are caught up with.
		up := a.Conn.StatusChanged(nats.CONNECTED)
		fctx, stopFlush := context.WithCancel(ctx)
		flushing := make(chan struct{})
		go func() {
			defer close(flushing)
			for {
				select {
				case <-fctx.Done():
					return
				case <-up:
					a.flush(fctx)
					a.catchUp(fctx)
				}
			}
		}()
		defer func() { stopFlush(); <-flushing; a.Conn.RemoveStatusListener(up) }()
	}
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
		start := time.Now()
		res, err := a.Check(ctx, m)
		a.Metrics.checked(m, time.Since(start), res)
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

// poll polls every http(s) manifest every PollInterval with a conditional
// GET, the first time at once (recording its validators); a change wakes
// a run (coalesced with any other wake-up).
func (a *Agent) poll(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	f := source.New(source.Options{HTTPClient: a.HTTPClient})
	for _, m := range a.Manifests {
		if !strings.HasPrefix(m, "https://") && !strings.HasPrefix(m, "http://") {
			continue
		}
		w, err := f.WatchHTTP(m)
		if err != nil {
			a.logf("manifest %v: not polled", err)
			continue
		}
		src := m
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The first poll only records the validators; it runs beside
			// the start run, so a source that hangs delays no run.
			_, err := w.Poll(ctx)
			failing := err != nil
			if failing && ctx.Err() == nil {
				a.logf("%v; polling again every %s", err, a.PollInterval)
			}
			t := time.NewTicker(a.PollInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				changed, err := w.Poll(ctx)
				if err != nil {
					if !failing && ctx.Err() == nil {
						a.logf("%v; polling again every %s", err, a.PollInterval)
					}
					failing = true
					continue
				}
				failing = false
				if changed {
					a.logf("%s changed", w)
					select {
					case a.wake <- src:
					default: // a run is already due: coalesce
					}
				}
			}
		}()
	}
	return &wg
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
	defer func() { a.Metrics.observe(r, res) }()
	if a.Digest != nil {
		r.Digest = a.Digest(manifest)
	}
	a.applied(manifest, r.Digest)
	if a.Cached != nil {
		if r.Cached = a.Cached(manifest); len(r.Cached) > 0 {
			r.Source = "cache"
			for _, c := range r.Cached {
				a.logf("run of %s: %s unreachable (%s): used its last-good copy, fetched %s ago (sha256 %s)", manifest, c.Name, c.Reason, c.Age.Round(time.Second), short(c.Digest))
			}
		}
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

// publish queues r and sends the queue to JetStream, oldest first. While
// NATS is unreachable results wait in the queue (bounded by QueueSize,
// the oldest dropped and counted); they go out in order on reconnection
// or with the next result. Never fatal.
func (a *Agent) publish(ctx context.Context, r Result) {
	if a.JS == nil {
		return
	}
	a.pmu.Lock()
	size := a.QueueSize
	if size <= 0 {
		size = DefaultQueue
	}
	if len(a.queue) >= size {
		a.dropped++
		a.Metrics.droppedResult()
		a.logf("result queue full (%d): the oldest result, of %s at %s, dropped (%d dropped so far)", size, a.queue[0].Manifest, a.queue[0].Started.Format(time.RFC3339), a.dropped)
		a.queue = append(a.queue[:0], a.queue[1:]...)
	}
	a.queue = append(a.queue, r)
	a.pmu.Unlock()
	a.flush(ctx)
}

// Pending is how many results wait to be published.
func (a *Agent) Pending() int {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	return len(a.queue)
}

// flush publishes queued results in order until one fails.
func (a *Agent) flush(ctx context.Context) {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	defer func() { a.Metrics.queued(len(a.queue)) }()
	for len(a.queue) > 0 {
		if a.Conn != nil && !a.Conn.IsConnected() {
			a.logf("NATS is not reachable now: %d results queued, published once it is", len(a.queue))
			return
		}
		r := a.queue[0]
		r.ResultsDropped = a.dropped
		if err := a.send(ctx, r); err != nil {
			a.logf("result of %s not published yet (%d queued): %v", r.Manifest, len(a.queue), err)
			return
		}
		a.queue = a.queue[1:]
	}
}

func (a *Agent) send(ctx context.Context, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// A run ended by a signal still reports: publish on a fresh deadline.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishDeadline)
	defer cancel()
	if !a.streamOK {
		if err := EnsureStream(pctx, a.JS); err != nil {
			return err
		}
		a.streamOK = true
	}
	if _, err := a.JS.Publish(pctx, ResultSubject(a.Node), b); err != nil {
		return fmt.Errorf("to %s: %w", ResultSubject(a.Node), err)
	}
	return nil
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
