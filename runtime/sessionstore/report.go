package sessionstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
)

// Report is what a session adds up to: the run summary's counts, and how
// many distinct type#name resources the events are about.
type Report struct {
	session.Summary
	Unique int `json:"unique_resources"`
}

// Report adds up c. Run Time spans the session start (the first event when
// there is no start event) to the end of the last event.
func (c *Contents) Report() Report {
	r := Report{Summary: c.Session().Summary()}
	r.RunTime = 0
	unique := map[string]bool{}
	var first, end time.Time
	if c.Start != nil {
		first = c.Start.Timestamp
	}
	for _, ev := range c.Events {
		unique[ev.Ref()] = true
		if first.IsZero() || ev.Timestamp.Before(first) {
			first = ev.Timestamp
		}
		if e := ev.Timestamp.Add(ev.Duration); e.After(end) {
			end = e
		}
	}
	r.Unique = len(unique)
	if !first.IsZero() && end.After(first) {
		r.RunTime = end.Sub(first)
	}
	return r
}

// WriteText prints the report in the layout of the run summary.
func (r Report) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, `Session Summary

             Run Time: %s
      Total Resources: %d
     Unique Resources: %d
     Stable Resources: %d
    Changed Resources: %d
     Failed Resources: %d
    Skipped Resources: %d
  Refreshed Resources: %d
         Total Errors: %d
`, r.RunTime.Round(time.Millisecond), r.Total, r.Unique, r.Stable, r.Changed, r.Failed, r.Skipped, r.Refreshed, r.TotalErrors)
	return err
}

// Remove deletes the session directory. It refuses unless the directory
// lies inside os.TempDir() (symlinks resolved) and holds nothing but event
// files, so a mistyped --session cannot delete anything else.
func (s *Store) Remove() error {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return fmt.Errorf("%w %s: resolving the temporary directory: %v", ErrRefused, s.dir, err)
	}
	dir, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrRefused, s.dir, err)
	}
	rel, err := filepath.Rel(tmp, dir)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w %s: it is not inside the temporary directory %s; delete it yourself if you mean to", ErrRefused, s.dir, tmp)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrRefused, s.dir, err)
	}
	for _, de := range entries {
		name := de.Name()
		ours := strings.HasSuffix(name, Suffix) || strings.HasPrefix(name, tempPrefix)
		if !ours || !de.Type().IsRegular() {
			return fmt.Errorf("%w %s: it holds %s, which is not a session event; delete it yourself if you mean to", ErrRefused, s.dir, name)
		}
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing session directory: %w", err)
	}
	return nil
}
