package session

import (
	"fmt"
	"io"
	"time"
)

// Summary is the run report of docs/manifests.md.
type Summary struct {
	RunTime           time.Duration `json:"run_time"`
	Total             int           `json:"total_resources"`
	Stable            int           `json:"stable_resources"`
	Changed           int           `json:"changed_resources"`
	Failed            int           `json:"failed_resources"`
	Skipped           int           `json:"skipped_resources"`
	Refreshed         int           `json:"refreshed_resources"`
	UnmetRequirements int           `json:"unmet_requirements"`
	Checked           int           `json:"checked_resources"`
	Unchecked         int           `json:"unchecked_resources"` // --monitor-only: no health checks to run
	ChecksOK          int           `json:"checks_ok"`
	ChecksWarning     int           `json:"checks_warning"`
	ChecksCritical    int           `json:"checks_critical"`
	ChecksUnknown     int           `json:"checks_unknown"`
	TotalErrors       int           `json:"total_errors"`
}

func (s *Summary) add(e *Event) {
	s.Total++
	switch {
	case e.Failed:
		s.Failed++
		s.TotalErrors++
	case e.Skipped:
		s.Skipped++
	case e.Changed:
		s.Changed++
	case e.NotChecked:
		s.Unchecked++
	default:
		s.Stable++
	}
	if e.Refreshed {
		s.Refreshed++
	}
	s.UnmetRequirements += len(e.UnmetRequirements)
	if len(e.HealthCheck) > 0 {
		s.Checked++
	}
	for _, h := range e.HealthCheck {
		switch h.Status {
		case HealthOK:
			s.ChecksOK++
		case HealthWarning:
			s.ChecksWarning++
		case HealthCritical:
			s.ChecksCritical++
		default:
			s.ChecksUnknown++
		}
	}
}

// WriteText prints the summary in CCM's layout. Only a --monitor-only run
// with resources that have no health checks adds an "Unchecked Resources"
// line; other runs keep CCM's layout.
func (s Summary) WriteText(w io.Writer) error {
	unchecked := ""
	if s.Unchecked > 0 {
		unchecked = fmt.Sprintf("  Unchecked Resources: %d (no health checks)\n", s.Unchecked)
	}
	_, err := fmt.Fprintf(w, `Manifest Run Summary

             Run Time: %s
      Total Resources: %d
     Stable Resources: %d
    Changed Resources: %d
     Failed Resources: %d
    Skipped Resources: %d
  Refreshed Resources: %d
   Unmet Requirements: %d
    Checked Resources: %d (ok: %d, critical: %d, warning: %d, unknown: %d)
%s         Total Errors: %d
`, s.RunTime.Round(time.Millisecond), s.Total, s.Stable, s.Changed, s.Failed, s.Skipped, s.Refreshed,
		s.UnmetRequirements, s.Checked, s.ChecksOK, s.ChecksCritical, s.ChecksWarning, s.ChecksUnknown, unchecked, s.TotalErrors)
	return err
}
