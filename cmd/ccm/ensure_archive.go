package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// newEnsureArchiveCommand is CCM's `ensure archive FILE URL` (docs/archive.md).
func newEnsureArchiveCommand(g *ensureGroup) *cobra.Command {
	var (
		owner, group, checksum, extract, creates, username, password string
		headers                                                      []string
		cleanup                                                      bool
		common                                                       *commonFlags
	)
	cmd := &cobra.Command{
		Use:   "archive FILE URL",
		Short: "Download an archive to FILE and extract it (tar.gz, tgz, tar, zip)",
		Long: `Download URL to FILE (an absolute path ending like the URL: .tar.gz, .tgz,
.tar or .zip), verify --checksum before anything is extracted, and extract it
under --extract. A later run downloads nothing when FILE has the checksum, or
when --creates exists. The host makes the request: the net grant (--grants)
must allow the URL and every redirect. Owner and group default to the
invoking user and their primary group.`,
		Example: `  ccm ensure archive /opt/dl/app.tar.gz https://releases.example.com/app.tar.gz \
      --checksum 3a7b... --extract /opt/app --creates /opt/app/bin/app --cleanup`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("takes FILE URL: the path to save the archive to and its URL, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "archive", common, func(facts map[string]any) (map[string]any, error) {
				p := map[string]any{"name": args[0], "url": args[1], "ensure": "present"}
				o, gr, err := ownerGroup(facts, owner, group)
				if err != nil {
					return nil, err
				}
				p["owner"], p["group"] = o, gr
				for k, v := range map[string]string{"checksum": checksum, "extract_parent": extract, "creates": creates, "username": username, "password": password} {
					if v != "" {
						p[k] = v
					}
				}
				if cleanup {
					p["cleanup"] = true
				}
				if len(headers) > 0 {
					h := map[string]any{}
					for _, kv := range headers {
						k, v, ok := strings.Cut(kv, ":")
						if !ok || strings.TrimSpace(k) == "" {
							return nil, fmt.Errorf("--header %q is not NAME:VALUE", kv)
						}
						h[strings.TrimSpace(k)] = strings.TrimSpace(v)
					}
					p["headers"] = h
				}
				return p, nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&owner, "owner", "", "owner `USER[:GROUP]` of the archive and what it extracts (default: the invoking user)")
	f.StringVar(&group, "group", "", "`GROUP` (default: the invoking user's primary group)")
	f.StringVar(&checksum, "checksum", "", "expected hex `SHA256` of the archive")
	f.StringVar(&extract, "extract", "", "directory `DIR` to extract into")
	f.StringVar(&extract, "extract-parent", "", "the same as --extract")
	_ = f.MarkHidden("extract-parent")
	f.StringVar(&creates, "creates", "", "skip download and extraction when `FILE` exists")
	f.BoolVar(&cleanup, "cleanup", false, "remove the archive after extracting (needs --extract and --creates)")
	f.StringVar(&username, "username", "", "HTTP basic auth `USER`")
	f.StringVar(&password, "password", os.Getenv("HTTP_PASSWORD"), "HTTP basic auth `PASS` (default $HTTP_PASSWORD)")
	f.StringArrayVarP(&headers, "header", "H", nil, "HTTP request header `NAME:VALUE` (repeatable)")
	common = addCommonFlags(cmd)
	return cmd
}
