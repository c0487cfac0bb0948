package agent

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the agent's Prometheus metrics, with CCM's names where CCM
// has the metric (choria_ccm_agent_...).
type Metrics struct {
	applyTime    *prometheus.SummaryVec
	remediations *prometheus.CounterVec
	runs         *prometheus.CounterVec
	lastRun      *prometheus.GaugeVec
}

// NewMetrics registers the agent's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		applyTime: prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Name: "choria_ccm_agent_apply_duration_seconds",
			Help: "Time taken to apply manifests in agents",
		}, []string{"manifest"}),
		remediations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "choria_ccm_agent_healthcheck_remediations_count",
			Help: "How many times health checks triggered remediating runs",
		}, []string{"manifest"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "choria_ccm_agent_runs_count",
			Help: "Agent runs by manifest and outcome (ok, failed, error: nothing applied)",
		}, []string{"manifest", "outcome"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "choria_ccm_agent_last_run_timestamp_seconds",
			Help: "When the manifest's last run ended, as a Unix time",
		}, []string{"manifest"}),
	}
	reg.MustRegister(m.applyTime, m.remediations, m.runs, m.lastRun)
	return m
}

func (m *Metrics) observe(r Result) {
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
}

func (m *Metrics) remediated(manifest string) {
	if m == nil {
		return
	}
	m.remediations.WithLabelValues(manifest).Inc()
}
