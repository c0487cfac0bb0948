package agent

import (
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's Prometheus metrics: CCM's (its
// internal/metrics, same names, labels and help) and a few of ours,
// marked below. Durations are measured around the work they name.
type Metrics struct {
	// CCM's.
	manifestApply  *prometheus.SummaryVec // source
	resourceApply  *prometheus.SummaryVec // type, provider, name
	healthStatus   *prometheus.CounterVec // type, name, status, check
	healthCheck    *prometheus.SummaryVec // type, name, check
	resourceStates map[string]*prometheus.CounterVec
	factGather     *prometheus.SummaryVec
	applyTime      *prometheus.SummaryVec // manifest
	healthTime     *prometheus.SummaryVec // manifests
	remediations   *prometheus.CounterVec // manifest
	dataTime       *prometheus.SummaryVec
	factsTime      *prometheus.SummaryVec
	dataErrors     *prometheus.CounterVec // url
	factsErrors    *prometheus.CounterVec
	fetches        *prometheus.CounterVec // manifest
	fetchErrors    *prometheus.CounterVec // manifest

	// Ours.
	runs    *prometheus.CounterVec // manifest, outcome
	lastRun *prometheus.GaugeVec   // manifest
	cached  *prometheus.CounterVec // manifest
	dropped prometheus.Counter
	queue   prometheus.Gauge
}

// ResourceStates are the states CCM counts resources in, each as
// choria_ccm_resource_state_STATE_count{type,name}.
var ResourceStates = []string{"total", "noop", "changed", "skipped", "refreshed", "failed", "error", "stable"}

func summary(name, help string, labels ...string) *prometheus.SummaryVec {
	return prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "choria_ccm_" + name, Help: help}, labels)
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "choria_ccm_" + name, Help: help}, labels)
}

// NewMetrics registers the agent's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		manifestApply: summary("manifest_apply_duration_seconds", "Time taken to apply an entire manifest", "source"),
		resourceApply: summary("resource_apply_duration_seconds", "Time taken to apply a particular resource", "type", "provider", "name"),
		healthStatus:  counter("healthcheck_status_count", "How many resources are in a certain state", "type", "name", "status", "check"),
		healthCheck:   summary("healthcheck_duration_seconds", "Time taken to health check a particular resource", "type", "name", "check"),
		factGather:    summary("facts_gather_duration_seconds", "Time taken to gather facts"),
		applyTime:     summary("agent_apply_duration_seconds", "Time taken to apply manifests in agents", "manifest"),
		healthTime:    summary("agent_healthcheck_duration_seconds", "How long health check runs took", "manifests"),
		remediations:  counter("agent_healthcheck_remediations_count", "How many times health checks triggered remediating runs", "manifest"),
		dataTime:      summary("agent_data_resolve_duration_seconds", "Time taken to resolve data in agents"),
		factsTime:     summary("agent_facts_resolve_duration_seconds", "Time taken to resolve facts in agents"),
		dataErrors:    counter("agent_data_resolve_error_count", "How many times resolving data failed in agents", "url"),
		factsErrors:   counter("agent_facts_resolve_error_count", "How many times resolving facts failed in agents"),
		fetches:       counter("agent_manifest_fetch_count", "How many times manifests were fetch from remote", "manifest"),
		fetchErrors:   counter("agent_manifest_fetch_error_count", "How many times fetching manifests failed in agents", "manifest"),

		runs:    counter("agent_runs_count", "Agent runs by manifest and outcome (ok, failed, error: nothing applied)", "manifest", "outcome"),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "choria_ccm_agent_last_run_timestamp_seconds", Help: "When the manifest's last run ended, as a Unix time"}, []string{"manifest"}),
		cached:  counter("agent_last_good_used_count", "Runs that used a last-good copy because a source was unreachable", "manifest"),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "choria_ccm_agent_results_dropped_count", Help: "Results dropped from the full queue while NATS was unreachable"}),
		queue:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "choria_ccm_agent_results_queued", Help: "Results waiting to be published"}),
	}
	m.resourceStates = map[string]*prometheus.CounterVec{}
	help := map[string]string{
		"total": "processed", "noop": "in noop mode", "changed": "changed", "skipped": "skipped",
		"refreshed": "refreshed", "failed": "failed", "error": "had errors", "stable": "in stable state",
	}
	cs := []prometheus.Collector{m.manifestApply, m.resourceApply, m.healthStatus, m.healthCheck, m.factGather, m.applyTime, m.healthTime,
		m.remediations, m.dataTime, m.factsTime, m.dataErrors, m.factsErrors, m.fetches, m.fetchErrors,
		m.runs, m.lastRun, m.cached, m.dropped, m.queue}
	for _, s := range ResourceStates {
		verb := "were "
		if s == "error" {
			verb = ""
		}
		m.resourceStates[s] = counter("resource_state_"+s+"_count", "How many resources "+verb+help[s], "type", "name")
		cs = append(cs, m.resourceStates[s])
	}
	reg.MustRegister(cs...)
	return m
}

// observe records a finished run (res nil: nothing was applied).
func (m *Metrics) observe(r Result, res *engine.Result) {
	if m == nil {
		return
	}
	m.applyTime.WithLabelValues(r.Manifest).Observe(r.Duration.Seconds())
	outcome := "ok"
	switch {
	case r.Error != "":
		outcome = "error"
	case !r.Successful:
		outcome = "failed"
	}
	m.runs.WithLabelValues(r.Manifest, outcome).Inc()
	m.lastRun.WithLabelValues(r.Manifest).Set(float64(r.Started.Add(r.Duration).UnixNano()) / 1e9)
	if source.IsRemote(r.Manifest) {
		// A fetch failed: the run fell back to the manifest's last-good
		// copy, or stopped at the fetch (its error names the bundle).
		shown := r.Manifest
		if ref, err := source.Parse(r.Manifest); err == nil {
			shown = ref.String()
		}
		failed := res == nil && strings.Contains(r.Error, "bundle "+shown)
		for _, c := range r.Cached {
			failed = failed || c.Name == shown
		}
		if failed {
			m.fetchErrors.WithLabelValues(r.Manifest).Inc()
		} else {
			m.fetches.WithLabelValues(r.Manifest).Inc()
		}
	}
	if len(r.Cached) > 0 {
		m.cached.WithLabelValues(r.Manifest).Inc()
	}
	if res == nil {
		return
	}
	m.manifestApply.WithLabelValues(r.Manifest).Observe(r.Duration.Seconds())
	m.resources(res, false)
}

// resources records each resource's outcome as CCM does (its
// session.updateMetrics): one state per event, the first that holds of
// noop, changed, skipped, refreshed, failed, error, else stable.
func (m *Metrics) resources(res *engine.Result, healthOnly bool) {
	for _, e := range res.Events {
		name := e.Name
		if e.Alias != "" {
			name = e.Alias
		}
		if !healthOnly {
			m.resourceApply.WithLabelValues(e.Type, e.Provider, name).Observe(e.Duration.Seconds())
		}
		state := "stable"
		switch {
		case e.Noop:
			state = "noop"
		case e.Changed:
			state = "changed"
		case e.Skipped:
			state = "skipped"
		case e.Refreshed:
			state = "refreshed"
		case e.Failed:
			state = "failed"
		case len(e.Error) > 0:
			state = "error"
		}
		m.resourceStates["total"].WithLabelValues(e.Type, name).Inc()
		m.resourceStates[state].WithLabelValues(e.Type, name).Inc()
		for _, hc := range e.HealthCheck {
			m.healthStatus.WithLabelValues(e.Type, e.Name, strings.ToUpper(hc.Status), hc.Name).Inc()
			m.healthCheck.WithLabelValues(e.Type, e.Name, hc.Name).Observe(hc.Duration.Seconds())
		}
	}
}

// checked records a health-check run of manifest that took d.
func (m *Metrics) checked(manifest string, d time.Duration, res *engine.Result) {
	if m == nil {
		return
	}
	m.healthTime.WithLabelValues(manifest).Observe(d.Seconds())
	if res != nil {
		m.resources(res, true)
	}
}

// Facts records one gathering of facts that took d (err: it failed).
func (m *Metrics) Facts(d time.Duration, err error) {
	if m == nil {
		return
	}
	m.factGather.WithLabelValues().Observe(d.Seconds())
	m.factsTime.WithLabelValues().Observe(d.Seconds())
	if err != nil {
		m.factsErrors.WithLabelValues().Inc()
	}
}

// Data records one resolution of external data from url that took d.
func (m *Metrics) Data(url string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.dataTime.WithLabelValues().Observe(d.Seconds())
	if err != nil {
		m.dataErrors.WithLabelValues(url).Inc()
	}
}

func (m *Metrics) remediated(manifest string) {
	if m == nil {
		return
	}
	m.remediations.WithLabelValues(manifest).Inc()
}

func (m *Metrics) droppedResult() {
	if m == nil {
		return
	}
	m.dropped.Inc()
}

func (m *Metrics) queued(n int) {
	if m == nil {
		return
	}
	m.queue.Set(float64(n))
}
