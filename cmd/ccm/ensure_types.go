package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// commonFlags are the flags every ensure type subcommand has (docs/shell.md):
// the common properties of a manifest resource.
type commonFlags struct {
	cmd        *cobra.Command
	alias      string
	require    []string
	ifExpr     string
	unless     string
	provider   string
	check      string
	checkTries int
	checkSleep string
}

func addCommonFlags(cmd *cobra.Command) *commonFlags {
	c := &commonFlags{cmd: cmd}
	f := cmd.Flags()
	f.StringVar(&c.alias, "alias", "", "alias `NAME`, usable in --require/--subscribe as type#NAME")
	f.StringArrayVar(&c.require, "require", nil, "`type#name` that must not have failed in this session (repeatable; needs a session)")
	f.StringVar(&c.ifExpr, "if", "", "manage only if this `EXPR` is true (control.if)")
	f.StringVar(&c.unless, "unless", "", "skip if this `EXPR` is true (control.unless)")
	f.StringVar(&c.provider, "provider", "", "force the provider `NAME`")
	f.StringVar(&c.check, "check", "", "Nagios health check `COMMAND` run after the resource (exit 0 ok, 1 warning, 2 critical)")
	f.IntVar(&c.checkTries, "check-tries", 5, "tries for --check")
	f.StringVar(&c.checkSleep, "check-sleep", "1s", "pause between --check tries (`DURATION`)")
	return c
}

// addTo sets the common properties that were given.
func (c *commonFlags) addTo(p map[string]any) {
	if c.alias != "" {
		p["alias"] = c.alias
	}
	if len(c.require) > 0 {
		p["require"] = c.require
	}
	control := map[string]any{}
	if c.ifExpr != "" {
		control["if"] = c.ifExpr
	}
	if c.unless != "" {
		control["unless"] = c.unless
	}
	if len(control) > 0 {
		p["control"] = control
	}
	if c.provider != "" {
		p["provider"] = c.provider
	}
	if c.check != "" {
		p["health_checks"] = []any{map[string]any{"command": c.check, "tries": c.checkTries, "try_sleep": c.checkSleep}}
	}
}

// nameEnsure reads the NAME [ENSURE] arguments; ENSURE defaults to def
// (docs/shell.md), whatever the plugin's own default.
func nameEnsure(args []string, def string) map[string]any {
	p := map[string]any{"name": args[0], "ensure": def}
	if len(args) > 1 {
		p["ensure"] = args[1]
	}
	return p
}

func nameEnsureArgs(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < 1 || len(args) > 2 {
			return fmt.Errorf("takes NAME [ENSURE]: the %s and optionally its ensure value, got %d arguments", what, len(args))
		}
		return nil
	}
}

func newEnsureFileCommand(g *ensureGroup) *cobra.Command {
	var owner, group, mode, content, contentFile, source string
	var common *commonFlags
	cmd := &cobra.Command{
		Use:   "file NAME [ENSURE]",
		Short: "Manage a file or directory (ENSURE present, absent or directory; default present)",
		Long: `Manage a file, a directory (ENSURE directory) or the absence of a path
(ENSURE absent). Owner and group default to the invoking user and their
primary group; mode to 0644, or 0755 for a directory.

--content and the file read by --content-file are template-expanded;
--source copies a file verbatim. Without any of them only the attributes
are managed (an absent file is created empty).`,
		Example: `  ccm ensure file /etc/motd --content "Welcome to {{ Facts.host.info.hostname }}" --owner root:root
  ccm ensure file /srv/app directory --mode 0750
  ccm ensure file /tmp/old absent`,
		Args: nameEnsureArgs("path"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "file", common, func(facts map[string]any) (map[string]any, error) {
				p := nameEnsure(args, "present")
				f := cmd.Flags()
				ensure, _ := p["ensure"].(string)
				if ensure != "absent" {
					o, gr, err := ownerGroup(facts, owner, group)
					if err != nil {
						return nil, err
					}
					p["owner"], p["group"] = o, gr
					if mode == "" {
						mode = "0644"
						if ensure == "directory" {
							mode = "0755"
						}
					}
				}
				if mode != "" {
					p["mode"] = mode
				}
				switch {
				case f.Changed("content"):
					p["content"] = content
				case contentFile != "":
					b, err := os.ReadFile(contentFile)
					if err != nil {
						return nil, fmt.Errorf("--content-file: %w", err)
					}
					p["content"] = string(b)
				case source != "":
					p["source"] = source
				}
				return p, nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&owner, "owner", "", "owner `USER[:GROUP]` (default: the invoking user)")
	f.StringVar(&group, "group", "", "`GROUP` (default: the invoking user's primary group)")
	f.StringVar(&mode, "mode", "", "octal `MODE` (default 0644, 0755 for a directory)")
	f.StringVar(&content, "content", "", "the file's content (template-expanded)")
	f.StringVar(&contentFile, "content-file", "", "read the content from `FILE` (template-expanded)")
	f.StringVar(&source, "source", "", "copy `FILE` verbatim")
	cmd.MarkFlagsMutuallyExclusive("content", "content-file", "source")
	common = addCommonFlags(cmd)
	return cmd
}

// invokingUser is the user ccm runs as and their primary group, from the
// user fact family.
func invokingUser(facts map[string]any) (name, group string) {
	u, _ := facts["user"].(map[string]any)
	name = fmt.Sprint(u["name"])
	group = fmt.Sprint(u["group"])
	if u == nil {
		name, group = fmt.Sprint(os.Getuid()), fmt.Sprint(os.Getgid())
	}
	return name, group
}

func newEnsureExecCommand(g *ensureGroup) *cobra.Command {
	var (
		creates, timeout, cwd, path, onlyif, unless string
		returns                                     []int
		environment, subscribe                      []string
		refreshOnly, logOutput                      bool
		common                                      *commonFlags
	)
	cmd := &cobra.Command{
		Use:   "exec COMMAND",
		Short: "Run a command, once per run unless guarded",
		Long: `Run COMMAND (split with shell quoting, run without a shell; --provider shell
runs it with /bin/sh -c) in a clean environment. Guards: --creates, --exec-if,
--exec-unless; --refresh-only runs it only when a --subscribe target changed.`,
		Example: `  ccm ensure exec "/usr/bin/touch /tmp/flag" --creates /tmp/flag
  ccm ensure exec "systemctl daemon-reload" --refresh-only --subscribe file#/etc/systemd/system/app.service`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("takes one COMMAND (quote it), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "exec", common, func(map[string]any) (map[string]any, error) {
				f := cmd.Flags()
				p := map[string]any{"name": args[0], "timeout": timeout}
				set := func(flag, key string, v any) {
					if f.Changed(flag) {
						p[key] = v
					}
				}
				set("creates", "creates", creates)
				set("returns", "returns", returns)
				set("cwd", "cwd", cwd)
				set("environment", "environment", environment)
				set("path", "path", path)
				set("refresh-only", "refreshonly", refreshOnly)
				set("logoutput", "logoutput", logOutput)
				set("exec-if", "onlyif", onlyif)
				set("exec-unless", "unless", unless)
				if len(subscribe) > 0 {
					p["subscribe"] = subscribe
				}
				return p, nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&creates, "creates", "", "skip when `FILE` exists")
	f.IntSliceVar(&returns, "returns", []int{0}, "accepted exit `CODE` (repeatable)")
	f.StringVar(&timeout, "timeout", "1m", "kill the command after `DURATION`")
	f.StringVar(&cwd, "cwd", "", "working `DIR` (default /)")
	f.StringArrayVarP(&environment, "environment", "e", nil, "`KEY=VALUE` added to the environment (repeatable)")
	f.StringVar(&path, "path", "", "colon-separated `DIRS`: the PATH to find the program and for the command")
	f.BoolVar(&refreshOnly, "refresh-only", false, "run only when a --subscribe target changed")
	f.StringArrayVarP(&subscribe, "subscribe", "S", nil, "`type#name` whose change runs the command (repeatable)")
	f.BoolVar(&logOutput, "logoutput", false, "log the command's output")
	f.StringVar(&onlyif, "exec-if", "", "run only if guard `COMMAND` exits 0 (onlyif)")
	f.StringVar(&unless, "exec-unless", "", "run only if guard `COMMAND` exits non-zero (unless)")
	common = addCommonFlags(cmd)
	return cmd
}

func newEnsurePackageCommand(g *ensureGroup) *cobra.Command {
	var common *commonFlags
	cmd := &cobra.Command{
		Use:     "package NAME [ENSURE]",
		Aliases: []string{"pkg"},
		Short:   "Manage a package (ENSURE present, absent, latest or a version; default present)",
		Example: `  ccm ensure package nginx
  ccm ensure pkg nginx latest --noop`,
		Args: nameEnsureArgs("package name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "package", common, func(map[string]any) (map[string]any, error) {
				return nameEnsure(args, "present"), nil
			})
		},
	}
	common = addCommonFlags(cmd)
	return cmd
}

func newEnsureServiceCommand(g *ensureGroup) *cobra.Command {
	var (
		enable, disable bool
		subscribe       []string
		common          *commonFlags
	)
	cmd := &cobra.Command{
		Use:     "service NAME [ENSURE]",
		Aliases: []string{"svc"},
		Short:   "Manage a systemd service (ENSURE running or stopped; default running)",
		Example: `  ccm ensure service nginx --enable
  ccm ensure svc nginx --subscribe file#/etc/nginx/nginx.conf`,
		Args: nameEnsureArgs("service name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runEnsure(cmd, "service", common, func(map[string]any) (map[string]any, error) {
				p := nameEnsure(args, "running")
				switch {
				case enable:
					p["enable"] = true
				case disable:
					p["enable"] = false
				}
				if len(subscribe) > 0 {
					p["subscribe"] = subscribe
				}
				return p, nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&enable, "enable", false, "enable at boot")
	f.BoolVar(&disable, "disable", false, "disable at boot (neither flag: leave it alone)")
	f.StringArrayVarP(&subscribe, "subscribe", "S", nil, "`type#name` whose change restarts the service (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("enable", "disable")
	common = addCommonFlags(cmd)
	return cmd
}

// ownerGroup is the owner and group of an ensured file: --owner USER[:GROUP]
// and --group, each defaulting to the invoking user's (sudo's caller when
// run through sudo).
func ownerGroup(facts map[string]any, owner, group string) (string, string, error) {
	u, ug := invokingUser(facts)
	o, og, _ := strings.Cut(owner, ":")
	if o == "" {
		o = u
	}
	switch {
	case og != "" && group != "" && og != group:
		return "", "", fmt.Errorf("--owner %s and --group %s name different groups; give one", owner, group)
	case group != "":
	case og != "":
		group = og
	default:
		group = ug
	}
	return o, group, nil
}
