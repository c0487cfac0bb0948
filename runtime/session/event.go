package session

import (
	"time"

	"github.com/segmentio/ksuid"
)

// Protocol is the TransactionEvent protocol id (CCM-compatible).
const Protocol = "io.choria.ccm.v1.transaction.event"

// Event is one resource's result, with CCM's field names (docs/shell.md).
type Event struct {
	Protocol        string              `json:"protocol"`
	EventID         string              `json:"event_id"`
	Timestamp       time.Time           `json:"timestamp"`
	Type            string              `json:"type"`
	Provider        string              `json:"provider"`
	Name            string              `json:"name"`
	Alias           string              `json:"alias,omitempty"`
	RequestedEnsure string              `json:"requested_ensure"`
	FinalEnsure     string              `json:"final_ensure"`
	Duration        time.Duration       `json:"duration"` // nanoseconds
	Properties      map[string]any      `json:"properties,omitempty"`
	Status          map[string]any      `json:"status,omitempty"`
	NoopMessage     string              `json:"noop_message,omitempty"`
	HealthCheck     []HealthCheckResult `json:"health_check,omitempty"`
	HealthCheckOnly bool                `json:"health_check_only,omitempty"`
	// NotChecked: a health-check-only run (--monitor-only) met a resource
	// with no health checks, so nothing about it was checked (a ccm
	// addition: CCM reported it stable).
	NotChecked        bool     `json:"not_checked,omitempty"`
	Error             []string `json:"error"`
	Changed           bool     `json:"changed"`
	Refreshed         bool     `json:"refreshed,omitempty"`
	Failed            bool     `json:"failed"`
	Skipped           bool     `json:"skipped,omitempty"`
	Noop              bool     `json:"noop"`
	UnmetRequirements []string `json:"unmet_requirements,omitempty"`

	// ccm additions, outside CCM's schema: where the resource was declared.
	Manifest string   `json:"manifest,omitempty"`
	Messages []string `json:"messages,omitempty"`
	// Diff shows a content change (a unified diff, or a one-line summary):
	// in noop, and in real runs with apply --diff.
	Diff string `json:"diff,omitempty"`
}

// HealthCheckResult is one health check's outcome.
type HealthCheckResult struct {
	Name   string `json:"name,omitempty"`
	Status string `json:"status"` // ok, warning, critical, unknown
	Tries  int    `json:"tries"`
	Output string `json:"output"`
	// Duration is how long the check took, tries included (for the
	// agent's metrics; not in the event's JSON, CCM's schema).
	Duration time.Duration `json:"-"`
}

// Health check statuses.
const (
	HealthOK       = "ok"
	HealthWarning  = "warning"
	HealthCritical = "critical"
	HealthUnknown  = "unknown"
)

// NewEvent returns an event with identity, id and timestamp filled.
func NewEvent(typ, name, alias string) *Event {
	return &Event{
		Protocol:  Protocol,
		EventID:   ksuid.New().String(),
		Timestamp: time.Now().UTC(),
		Type:      typ,
		Name:      name,
		Alias:     alias,
		Error:     []string{},
	}
}

// Ref is the event's primary reference, "type#name".
func (e *Event) Ref() string { return e.Type + "#" + e.Name }

// Display is how logs name the resource: "type#alias (alias)" when aliased.
func (e *Event) Display() string {
	if e.Alias != "" {
		return e.Type + "#" + e.Alias + " (alias)"
	}
	return e.Ref()
}

// Fail marks the event failed with a message. A failed event never counts as
// changed, so it never fires subscribers (CCM's rule, kept: docs/manifests.md).
func (e *Event) Fail(msg string) {
	e.Failed = true
	e.Changed = false
	e.Error = append(e.Error, msg)
}

// Outcome is the event's one-word result, in the summary's precedence order.
func (e *Event) Outcome() string {
	switch {
	case e.Failed:
		return "failed"
	case e.Skipped:
		return "skipped"
	case e.Refreshed:
		return "refreshed"
	case e.Changed:
		return "changed"
	case e.NotChecked:
		return "not checked"
	}
	return "stable"
}
