package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ccm-dev/ccm/plugins/internal/udiff"
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	actAdd    = "add"
	actUpdate = "update"
	actEqual  = "equal"

	fileMode = 0o644 // CCM writes rendered files 0644 and directories 0755
	dirMode  = 0o755

	// stagingDir holds a file while its post commands run, inside the
	// target so that the target's grant covers it; removed afterwards.
	stagingDir = ".ccm-scaffold-post"

	maxDiffBytes = 512 << 10
	maxDiffEdits = 1000
	maxDiffTotal = 1 << 20
)

// postPath is the standard PATH a post command's name is looked up in.
const postPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// change is one produced file compared with the target.
type change struct {
	rel    string
	action string
	file   *produced
	mode   uint32
}

// plan is a rendered source compared with the target directory.
type plan struct {
	targetExists  bool
	changes       []change // sorted by rel
	missingDirs   []string // source directories absent from the target
	extra         []string // files in the target the source does not produce (CCM's "purged")
	unposted      int      // files whose post commands did not run (noop, status)
	createdTarget bool     // post-processing created the target to stage files in
	seen          map[string]string
}

// survey renders the source and compares it with the target. With post,
// it runs the post commands (apply mode only), else it compares the
// rendered content as is.
func survey(h sdk.Host, s spec, workDir string, post bool) (*plan, error) {
	src, err := s.sourceDir(workDir)
	if err != nil {
		return nil, err
	}
	st, err := h.Stat(abi.FSStatRequest{Path: src, FollowSymlinks: true})
	if err != nil {
		return nil, fmt.Errorf("reading source directory %s: %w", src, err)
	}
	if !st.Exists || st.Type != "directory" {
		return nil, &missingSource{src: src}
	}
	env, err := templateEnv(h, s)
	if err != nil {
		return nil, err
	}
	r := newRenderer(h, s, src, workDir, env)
	if err := r.walk(""); err != nil {
		return nil, err
	}
	p := &plan{seen: map[string]string{}}
	tst, err := h.Stat(abi.FSStatRequest{Path: s.target})
	if err != nil {
		return nil, fmt.Errorf("reading target %s: %w", s.target, err)
	}
	switch {
	case !tst.Exists:
	case tst.Type == "directory":
		p.targetExists = true
	case tst.Type == "symlink":
		return nil, fmt.Errorf("target %s is a symlink (to %s); scaffold renders only into a real directory, name that directory instead", s.target, tst.LinkTarget)
	default:
		return nil, fmt.Errorf("target %s exists and is not a directory", s.target)
	}
	rels := append([]string(nil), r.order...)
	sort.Strings(rels)
	if post && len(s.post) > 0 {
		created, err := runPost(h, s, r, rels, p.targetExists)
		if err != nil {
			return nil, err
		}
		p.createdTarget = created
	}
	for _, rel := range rels {
		f := r.files[rel]
		if !post && len(s.postFor(rel)) > 0 {
			p.unposted++
		}
		if f.mode() == 0 {
			f.setMode(fileMode)
		}
		c, err := p.compare(h, s, f)
		if err != nil {
			return nil, err
		}
		p.changes = append(p.changes, c)
	}
	for _, d := range r.dirs {
		kind, err := p.kind(h, s, d)
		if err != nil {
			return nil, err
		}
		if kind == "" {
			p.missingDirs = append(p.missingDirs, d)
		}
	}
	if p.targetExists {
		produced := map[string]bool{}
		for _, rel := range rels {
			produced[rel] = true
		}
		if err := p.findExtra(h, s, "", produced); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// kind is the type of target/rel without following a final symlink ("" =
// missing), after checking that every directory between the target and it
// is a real directory: a symlink there would write outside the target.
func (p *plan) kind(h sdk.Host, s spec, rel string) (string, error) {
	if k, ok := p.seen[rel]; ok {
		return k, nil
	}
	if dir := path.Dir(rel); dir != "." {
		k, err := p.kind(h, s, dir)
		if err != nil {
			return "", err
		}
		switch k {
		case "", "directory":
		case "symlink":
			return "", fmt.Errorf("%s is a symlink; scaffold does not write through links (files would land outside %s): remove it or render elsewhere", path.Join(s.target, dir), s.target)
		default:
			return "", fmt.Errorf("%s is a %s where the source has a directory", path.Join(s.target, dir), k)
		}
		if k == "" {
			p.seen[rel] = ""
			return "", nil
		}
	} else if !p.targetExists {
		p.seen[rel] = ""
		return "", nil
	}
	st, err := h.Stat(abi.FSStatRequest{Path: path.Join(s.target, rel)})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path.Join(s.target, rel), err)
	}
	k := ""
	if st.Exists {
		k = st.Type
	}
	p.seen[rel] = k
	return k, nil
}

func (p *plan) compare(h sdk.Host, s spec, f *produced) (change, error) {
	c := change{rel: f.rel, file: f, mode: f.mode()}
	k, err := p.kind(h, s, f.rel)
	if err != nil {
		return c, err
	}
	switch k {
	case "":
		c.action = actAdd
	case "symlink":
		c.action = actUpdate // the write replaces the link, never its target
	case "file":
		st, err := h.Stat(abi.FSStatRequest{Path: path.Join(s.target, f.rel), Checksum: true})
		if err != nil {
			return c, fmt.Errorf("reading %s: %w", path.Join(s.target, f.rel), err)
		}
		sum := sha256.Sum256(f.content)
		if st.Exists && st.SHA256 == hex.EncodeToString(sum[:]) {
			c.action = actEqual
		} else {
			c.action = actUpdate
		}
	default:
		return c, fmt.Errorf("cannot render %s: a %s is in the way", path.Join(s.target, f.rel), k)
	}
	return c, nil
}

// findExtra lists the files under target/rel that the source does not
// produce. Symlinks are listed, never followed.
func (p *plan) findExtra(h sdk.Host, s spec, rel string, produced map[string]bool) error {
	dir := path.Join(s.target, rel)
	entries, err := h.List(abi.FSListRequest{Path: dir})
	if err != nil {
		return fmt.Errorf("reading target directory %s: %w", dir, err)
	}
	for _, e := range entries {
		child := path.Join(rel, e.Name)
		if rel == "" && e.Name == stagingDir {
			continue
		}
		if e.Type == "directory" {
			if err := p.findExtra(h, s, child, produced); err != nil {
				return err
			}
			continue
		}
		if !produced[child] {
			p.extra = append(p.extra, child)
		}
	}
	return nil
}

// work lists what the apply would do, one line each; empty when stable.
func (p *plan) work(s spec) []string {
	var out []string
	if s.ensure == ensureAbsent {
		for _, c := range p.changes {
			if c.action != actAdd {
				out = append(out, "remove "+path.Join(s.target, c.rel))
			}
		}
		return out
	}
	if !p.targetExists || p.createdTarget {
		out = append(out, "create directory "+s.target)
	}
	for _, d := range p.missingDirs {
		out = append(out, "create directory "+path.Join(s.target, d))
	}
	for _, c := range p.changes {
		switch c.action {
		case actAdd:
			out = append(out, "add "+path.Join(s.target, c.rel))
		case actUpdate:
			out = append(out, "update "+path.Join(s.target, c.rel))
		}
	}
	if s.purge {
		for _, e := range p.extra {
			out = append(out, "purge "+path.Join(s.target, e))
		}
	}
	return out
}

// affected is CCM's count for the noop message.
func (p *plan) affected(s spec) int {
	n := 0
	for _, c := range p.changes {
		if c.action != actEqual || s.ensure == ensureAbsent {
			if s.ensure == ensureAbsent && c.action == actAdd {
				continue
			}
			n++
		}
	}
	if s.purge && s.ensure == ensurePresent {
		n += len(p.extra)
	}
	return n
}

func (p *plan) observed() string {
	if p.targetExists {
		return ensurePresent
	}
	return ensureAbsent
}

// converge writes the changed files, creates the missing directories and
// purges.
func (p *plan) converge(h sdk.Host, s spec) error {
	if !p.targetExists {
		if err := h.Mkdir(abi.FSMkdirRequest{Path: s.target, Mode: dirMode, Parents: true}); err != nil {
			return fmt.Errorf("creating %s: %w", s.target, err)
		}
	}
	made := map[string]bool{}
	mkdir := func(rel string) error {
		if rel == "." || made[rel] || p.seen[rel] == "directory" {
			return nil
		}
		made[rel] = true
		if err := h.Mkdir(abi.FSMkdirRequest{Path: path.Join(s.target, rel), Mode: dirMode, Parents: true}); err != nil && !isCode(err, abi.CodeExists) {
			return fmt.Errorf("creating %s: %w", path.Join(s.target, rel), err)
		}
		return nil
	}
	for _, d := range p.missingDirs {
		if err := mkdir(d); err != nil {
			return err
		}
	}
	for _, c := range p.changes {
		if c.action == actEqual {
			continue
		}
		if err := mkdir(path.Dir(c.rel)); err != nil {
			return err
		}
		target := path.Join(s.target, c.rel)
		if err := h.WriteFile(abi.FSWriteRequest{Path: target, Content: c.file.content, Mode: c.mode}); err != nil {
			return fmt.Errorf("writing %s: %w", target, err)
		}
	}
	if s.purge {
		for _, e := range p.extra {
			target := path.Join(s.target, e)
			if err := h.Remove(abi.FSRemoveRequest{Path: target}); err != nil && !isCode(err, abi.CodeNotFound) {
				return fmt.Errorf("purging %s: %w", target, err)
			}
		}
	}
	return nil
}

// remove deletes the managed files (those the source produces), then the
// directories left empty, deepest first, and the target when empty; other
// files are left alone.
func (p *plan) remove(h sdk.Host, s spec) error {
	dirs := map[string]bool{}
	for _, c := range p.changes {
		if c.action == actAdd {
			continue
		}
		target := path.Join(s.target, c.rel)
		if err := h.Remove(abi.FSRemoveRequest{Path: target}); err != nil && !isCode(err, abi.CodeNotFound) {
			return fmt.Errorf("removing %s: %w", target, err)
		}
		for d := path.Dir(c.rel); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Slice(list, func(i, j int) bool {
		return strings.Count(list[i], "/") > strings.Count(list[j], "/") || (strings.Count(list[i], "/") == strings.Count(list[j], "/") && list[i] < list[j])
	})
	list = append(list, "")
	for _, d := range list {
		dir := path.Join(s.target, d)
		entries, err := h.List(abi.FSListRequest{Path: dir})
		if err != nil || len(entries) > 0 {
			continue
		}
		if err := h.Remove(abi.FSRemoveRequest{Path: dir}); err != nil && !isCode(err, abi.CodeNotFound) {
			h.Log("debug", fmt.Sprintf("directory %s not removed: %v", dir, err))
		}
	}
	return nil
}

// recheck compares the rendered files with the target again, after a
// change: nothing is rendered twice and no post command runs again.
func (p *plan) recheck(h sdk.Host, s spec) (*plan, error) {
	q := &plan{seen: map[string]string{}}
	tst, err := h.Stat(abi.FSStatRequest{Path: s.target})
	if err != nil {
		return nil, err
	}
	q.targetExists = tst.Exists && tst.Type == "directory"
	produced := map[string]bool{}
	for _, c := range p.changes {
		produced[c.rel] = true
		nc, err := q.compare(h, s, c.file)
		if err != nil {
			return nil, err
		}
		q.changes = append(q.changes, nc)
	}
	if s.ensure == ensureAbsent {
		return q, nil
	}
	for _, d := range p.missingDirs {
		if k, err := q.kind(h, s, d); err != nil || k != "directory" {
			q.missingDirs = append(q.missingDirs, d)
		}
	}
	if q.targetExists {
		if err := q.findExtra(h, s, "", produced); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// diff shows the content changes: a unified diff per text file, a summary
// for binary or large ones, at most maxDiffTotal in all.
func (p *plan) diff(h sdk.Host, s spec, hide bool) string {
	var b strings.Builder
	for _, c := range p.changes {
		if c.action == actEqual {
			continue
		}
		target := path.Join(s.target, c.rel)
		if b.Len() > maxDiffTotal {
			fmt.Fprintf(&b, "%s: content changed (diff not shown: over %d KiB of diffs)\n", target, maxDiffTotal>>10)
			continue
		}
		if hide {
			fmt.Fprintf(&b, "%s: content changed (diff hidden)\n", target)
			continue
		}
		var old []byte
		oldName := target
		if c.action == actAdd || p.seen[c.rel] == "symlink" {
			oldName = "/dev/null"
		} else {
			var err error
			old, err = h.ReadFile(abi.FSReadRequest{Path: target, MaxBytes: maxDiffBytes})
			if err != nil {
				fmt.Fprintf(&b, "%s: content changed (diff not shown: %v)\n", target, err)
				continue
			}
		}
		if len(c.file.content) > maxDiffBytes || !utf8.Valid(c.file.content) || !utf8.Valid(old) {
			fmt.Fprintf(&b, "%s: content changed (%d bytes; binary or over %d KiB, diff not shown)\n", target, len(c.file.content), maxDiffBytes>>10)
			continue
		}
		d, ok := udiff.Unified(oldName, target, old, c.file.content, maxDiffEdits)
		if !ok {
			fmt.Fprintf(&b, "%s: content changed (too many changed lines to show)\n", target)
			continue
		}
		b.WriteString(d)
	}
	return strings.TrimRight(b.String(), "\n")
}

// runPost stages each produced file that a post rule matches in
// target/.ccm-scaffold-post/, runs its commands there (ccm_exec, under the
// scope's exec grant), and takes back its content and mode.
func runPost(h sdk.Host, s spec, r *renderer, rels []string, targetExists bool) (created bool, err error) {
	staged := false
	stage := path.Join(s.target, stagingDir)
	defer func() {
		if staged {
			if rerr := h.Remove(abi.FSRemoveRequest{Path: stage, Recursive: true}); rerr != nil && err == nil {
				err = fmt.Errorf("removing %s: %w", stage, rerr)
			}
		}
		if created && err != nil {
			// Leave no empty target behind a failed post command.
			_ = h.Remove(abi.FSRemoveRequest{Path: s.target})
		}
	}()
	for _, rel := range rels {
		rules := s.postFor(rel)
		if len(rules) == 0 {
			continue
		}
		f := r.files[rel]
		if !staged {
			if !targetExists {
				if err := h.Mkdir(abi.FSMkdirRequest{Path: s.target, Mode: dirMode, Parents: true}); err != nil {
					return created, fmt.Errorf("creating %s: %w", s.target, err)
				}
				created = true
			}
			if err := h.Mkdir(abi.FSMkdirRequest{Path: stage, Mode: 0o700}); err != nil && !isCode(err, abi.CodeExists) {
				return created, fmt.Errorf("creating %s: %w", stage, err)
			}
			staged = true
		}
		tmp := path.Join(stage, path.Base(rel))
		if err := h.WriteFile(abi.FSWriteRequest{Path: tmp, Content: f.content, Mode: fileMode}); err != nil {
			return created, fmt.Errorf("staging %s for post-processing: %w", rel, err)
		}
		for _, rule := range rules {
			argv := rule.command(tmp)
			out, err := h.Exec(abi.ExecRequest{Argv: argv, Env: []string{postPath}, Cwd: s.target})
			if err != nil {
				return created, fmt.Errorf("post-processing %s with %q: %w", rel, strings.Join(rule.argv, " "), err)
			}
			if out.ExitCode != 0 || out.TimedOut {
				return created, fmt.Errorf("post-processing %s with %q: exit status %d: %s", rel, strings.Join(rule.argv, " "), out.ExitCode, strings.TrimSpace(out.Stderr+out.Stdout))
			}
		}
		st, err := h.Stat(abi.FSStatRequest{Path: tmp})
		if err != nil || !st.Exists || st.Type != "file" {
			return created, fmt.Errorf("post-processing %s: the file is gone after its commands (%v)", rel, err)
		}
		b, err := h.ReadFile(abi.FSReadRequest{Path: tmp, MaxBytes: maxFileBytes})
		if err != nil {
			return created, fmt.Errorf("post-processing %s: reading it back: %w", rel, err)
		}
		f.content = b
		f.setMode(st.Mode & 0o777)
		if err := h.Remove(abi.FSRemoveRequest{Path: tmp}); err != nil {
			return created, fmt.Errorf("removing %s: %w", tmp, err)
		}
	}
	return created, nil
}

// missingSource is a source directory that is not there (or not a
// directory).
type missingSource struct{ src string }

func (e *missingSource) Error() string { return "source: " + e.src + " is not a directory" }

func isCode(err error, code string) bool {
	ce, ok := err.(*abi.CallError)
	return ok && ce.Code == code
}
