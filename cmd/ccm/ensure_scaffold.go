package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// newEnsureScaffoldCommand is CCM's `ensure scaffold NAME [SOURCE]
// [ENSURE]` (docs/scaffold.md).
func newEnsureScaffoldCommand(g *ensureGroup) *cobra.Command {
	var (
		skipEmpty, purge bool
		left, right      string
		engine           string
		post             []string
		common           *commonFlags
	)
	cmd := &cobra.Command{
		Use:   "scaffold NAME [SOURCE] [ENSURE]",
		Short: "Render a directory of templates into NAME (ENSURE present or absent; default present)",
		Example: `  ccm ensure scaffold /etc/app templates/app --engine jet --purge
  ccm ensure scaffold /opt/app templates/app --post '*.sh=chmod +x {}'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 3 {
				return fmt.Errorf("takes NAME [SOURCE] [ENSURE]: the target directory, the template directory and optionally its ensure value, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "scaffold", common, func(map[string]any) (map[string]any, error) {
				p := map[string]any{"name": args[0], "ensure": "present", "engine": engine}
				if len(args) > 1 {
					src, err := filepath.Abs(args[1])
					if err != nil {
						return nil, fmt.Errorf("source %s: %w", args[1], err)
					}
					p["source"] = src
				}
				if len(args) > 2 {
					p["ensure"] = args[2]
				}
				if skipEmpty {
					p["skip_empty"] = true
				}
				if purge {
					p["purge"] = true
				}
				if left != "" {
					p["left_delimiter"] = left
				}
				if right != "" {
					p["right_delimiter"] = right
				}
				rules, err := postFlags(post)
				if err != nil {
					return nil, err
				}
				if len(rules) > 0 {
					p["post"] = rules
				}
				return p, nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&skipEmpty, "skip-empty", false, "do not create files that render empty")
	f.StringVar(&left, "left-delimiter", "", "left template `DELIMITER` (default {{ for go, [[ for jet)")
	f.StringVar(&right, "right-delimiter", "", "right template `DELIMITER` (default }} for go, ]] for jet)")
	f.StringVar(&engine, "engine", "jet", "template `ENGINE`: go or jet")
	f.StringArrayVar(&post, "post", nil, "post-processing `PATTERN=COMMAND` for rendered files whose base name matches PATTERN; {} is the file (repeatable)")
	f.BoolVar(&purge, "purge", false, "remove files in NAME that the source does not produce")
	common = addCommonFlags(cmd)
	return cmd
}

// postFlags turns --post PATTERN=COMMAND flags into post's list of maps,
// sorted by pattern as CCM's flag map is.
func postFlags(flags []string) ([]any, error) {
	sorted := append([]string(nil), flags...)
	sort.Strings(sorted)
	var out []any
	for _, f := range sorted {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--post %q: want PATTERN=COMMAND, such as '*.sh=chmod +x {}'", f)
		}
		out = append(out, map[string]any{k: v})
	}
	return out, nil
}
