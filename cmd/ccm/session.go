package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/sessionstore"
	"github.com/spf13/cobra"
)

func newSessionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Sessions: share require/subscribe state between ccm ensure runs",
		Long: `A session is a directory holding one event file per ccm ensure run, so that a
shell script's ensures can --require and --subscribe to each other and be
reported on together. ccm ensure uses the session in $CCM_SESSION_STORE (or
--session DIR).`,
		Example: `  eval "$(ccm session new)"
  ccm ensure package hello
  ccm ensure file /etc/hello.conf --content hi --require package#hello
  ccm session report --remove`,
	}
	cmd.AddCommand(newSessionNewCommand(), newSessionReportCommand())
	return cmd
}

func newSessionNewCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "new",
		Aliases: []string{"start", "create"},
		Short:   "Start a session; prints export CCM_SESSION_STORE=DIR for eval",
		Long: `New creates a session directory (a new ccm-session-* directory in the system
temporary directory, or --directory DIR, which must not exist yet), writes the
session start event and prints a shell line setting CCM_SESSION_STORE to it.`,
		Example: `  eval "$(ccm session new)"
  eval "$(ccm session new --directory /var/tmp/deploy-session)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sessionstore.New(dir)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "export %s=%s\n", sessionEnv, shellQuote(s.Dir()))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "directory", "", "create the session in `DIR` (must not exist)")
	return cmd
}

func newSessionReportCommand() *cobra.Command {
	var (
		dir             string
		remove, jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Summarise a session's events",
		Long: `Report prints the Session Summary of a session: run time, total and unique
resources, and how many were stable, changed, failed, skipped and refreshed.
The exit status is 1 when any resource of the session failed, so the report
can end a script. --remove then deletes the session directory, only when it
lies inside the system temporary directory and holds only event files.`,
		Example: `  ccm session report
  ccm session report --remove
  ccm session report --json | jq .summary.failed_resources`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("session") {
				if v, ok := os.LookupEnv(sessionEnv); ok && v == "" {
					return &exitError{exitUsage, fmt.Errorf("%s is set but empty; give --session DIR", sessionEnv)}
				}
			}
			if dir == "" {
				return &exitError{exitUsage, errors.New("no session: give --session DIR or set CCM_SESSION_STORE (eval \"$(ccm session new)\")")}
			}
			s, err := sessionstore.Open(dir)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			c, err := s.Read()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			rep := c.Report()
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				err = enc.Encode(struct {
					Session string              `json:"session"`
					Summary sessionstore.Report `json:"summary"`
					Events  []*session.Event    `json:"events"`
				}{s.Dir(), rep, append([]*session.Event{}, c.Events...)})
			} else {
				err = rep.WriteText(out)
			}
			if err != nil {
				return &exitError{exitFailed, err}
			}
			if remove {
				if err := s.Remove(); err != nil {
					return &exitError{exitUsage, err}
				}
			}
			if rep.Failed > 0 {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "session", os.Getenv(sessionEnv), "session `DIR` (default $CCM_SESSION_STORE)")
	f.BoolVar(&remove, "remove", false, "delete the session directory after reporting (only inside the system temporary directory)")
	f.BoolVar(&jsonOut, "json", false, "print the summary and the events as JSON")
	return cmd
}

// shellQuote quotes s for POSIX shells: bare when it holds only safe
// characters, else in single quotes.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:,+@%=", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
