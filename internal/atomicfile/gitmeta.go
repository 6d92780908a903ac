package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// ErrGitMetadata is the Kind of a refusal to change a repository's
// metadata: git runs commands named there (hooks, core.fsmonitor and
// filters in its config), and a change there shows in neither git status
// nor git diff, so a reviewer would never see it (N3).
var ErrGitMetadata = errors.New("it is in a repository's metadata")

// ErrGitExec is the Kind of a refusal to change what git executes (a
// repository's config, its hooks, info/) without exec approval.
var ErrGitExec = errors.New("git executes it")

// execParts are the entries of a git folder that make git run a command
// or redirect it to another folder whose config it would read, or that
// hide changes from review: config and config.worktree (core.fsmonitor,
// core.hooksPath, aliases, filters, diff drivers), hooks/, info/
// (attributes choose filters and diff drivers; exclude hides files from
// git status), commondir and gitdir (where git looks for all of that),
// modules/ and worktrees/ (the git folders of submodules and linked
// worktrees, with their own config and hooks), and the state of a rebase
// or cherry-pick in progress (its todo list may hold exec lines). The rest
// — objects, refs, HEAD, the index, logs — is data.
var execParts = []string{"config", "config.worktree", "hooks", "info", "commondir", "gitdir", "modules", "worktrees",
	"rebase-merge", "rebase-apply", "sequencer"}

// gitMeta says whether abs lies in a repository's metadata: dir is the
// git folder (the outermost found), exec whether the change is one git
// executes (see execParts) under any git folder it lies in.
type gitMeta struct {
	dir  string
	exec bool
}

// checkGitMetadata refuses changes to repositories' metadata unless the
// guard allows them (pathguard.Guard.AllowGitWrites), and passes those
// that change what git executes to approve (exec approval) once, all
// together. It runs before anything is prepared.
func checkGitMetadata(g *pathguard.Guard, changes []Change, approve func(paths []string) error) error {
	var execRels []string
	var first *Error
	fixed := fixedGitDirs(g)
	for _, c := range changes {
		m, ok := gitMetadata(g, c.Path, fixed)
		if !ok {
			continue
		}
		rel := g.Rel(c.Path)
		if !g.GitWritesAllowed() {
			return newError(rel, fmt.Errorf("%w (%s/), which write tools do not change: git runs commands set there (hooks, core.fsmonitor in its config), "+
				"and a change there shows in neither git status nor git diff. Change the working tree's files instead; if git's own files must change, "+
				"ask the user to change them with git (git config, git commit), or to start builtin-tools with --allow-git-writes",
				ErrGitMetadata, g.Rel(m.dir)), nil, len(changes))
		}
		if m.exec {
			execRels = append(execRels, rel)
			if first == nil {
				first = newError(rel, nil, nil, len(changes))
			}
		}
	}
	if len(execRels) == 0 {
		return nil
	}
	why := "(it is a repository's config, a hook, info/, or the git folder of a submodule or worktree), so changing it needs exec approval"
	if approve == nil {
		first.Err = fmt.Errorf("%w %s, which this tool cannot ask for; ask the user to make the change with git", ErrGitExec, why)
	} else if err := approve(execRels); err != nil {
		first.Err = fmt.Errorf("%w %s, and it was refused: %w", ErrGitExec, why, err)
	} else {
		return nil
	}
	first.Kind = ErrGitExec
	return first
}

// gitMetadata finds the repository metadata abs (resolved, inside the
// root) lies in, by every way git finds it:
//   - a component named .git, at any depth (a nested repository, a
//     submodule's .git file, one yet to be made);
//   - a folder above it that is a git folder by git's own test (HEAD, and
//     objects and refs or a commondir file), counting the entry the change
//     itself would create, so a git folder cannot be assembled piece by
//     piece: a bare repository, a worktree's or submodule's git folder;
//   - the folder a gitdir: file names (a .git file in the root, in a
//     folder above the root or above abs), and that folder's common dir;
//   - $GIT_DIR and $GIT_COMMON_DIR.
//
// fixed are the folders that do not depend on abs (fixedGitDirs).
func gitMetadata(g *pathguard.Guard, abs string, fixed []string) (gitMeta, bool) {
	name, err := g.Name(abs)
	if err != nil || name == "." {
		return gitMeta{}, false
	}
	comps := strings.Split(filepath.ToSlash(name), "/")
	var m gitMeta
	found := false
	add := func(dir string, inner []string) {
		if !found || len(dir) < len(m.dir) {
			m.dir = dir
		}
		found = true
		if len(inner) == 0 || slices.ContainsFunc(execParts, func(p string) bool { return strings.EqualFold(p, inner[0]) }) {
			m.exec = true
		}
	}
	root := g.Root()
	for i, c := range comps {
		if strings.EqualFold(c, ".git") {
			add(filepath.Join(root, filepath.Join(comps[:i+1]...)), comps[i+1:])
		}
	}
	for k := range comps {
		dir := filepath.Join(root, filepath.Join(comps[:k]...))
		if isGitDir(g, dir, comps[k]) {
			add(dir, comps[k:])
		}
	}
	within := func(dir string) {
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			inner := strings.Split(filepath.ToSlash(rel), "/")
			if rel == "." {
				inner = nil
			}
			add(dir, inner)
		}
	}
	for _, d := range fixed {
		within(d)
	}
	// The folders between the root and abs may hold a .git file too.
	for k := range comps {
		for _, d := range gitdirTargets(g, filepath.Join(root, filepath.Join(comps[:k]...))) {
			within(d)
		}
	}
	return m, found
}

// fixedGitDirs are the git folders named from outside the tree below the
// root: $GIT_DIR, $GIT_COMMON_DIR, and what a .git file in a folder above
// the root names.
func fixedGitDirs(g *pathguard.Guard) []string {
	var out []string
	for _, v := range []string{"GIT_DIR", "GIT_COMMON_DIR"} {
		if d := os.Getenv(v); d != "" {
			out = append(out, realPath(d))
		}
	}
	for d := filepath.Dir(g.Root()); ; d = filepath.Dir(d) {
		out = append(out, gitdirTargets(g, d)...)
		if d == filepath.Dir(d) {
			break
		}
	}
	return out
}

// isGitDir applies git's test for a git folder to dir (HEAD, and objects
// and refs or commondir; any kind of entry counts, as git's test accepts
// more than folders), counting next, the entry a change below dir would
// create, as present.
func isGitDir(g *pathguard.Guard, dir, next string) bool {
	has := func(name string) bool {
		if strings.EqualFold(name, next) {
			return true
		}
		_, err := g.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// gitdirTargets reads holder/.git when it is a "gitdir: PATH" file and
// returns the folder it names and that folder's common dir.
func gitdirTargets(g *pathguard.Guard, holder string) []string {
	target, ok := readPointer(g, filepath.Join(holder, ".git"), "gitdir:")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(holder, target)
	}
	target = realPath(target)
	out := []string{target}
	if common, ok := readPointer(g, filepath.Join(target, "commondir"), ""); ok {
		if !filepath.IsAbs(common) {
			common = filepath.Join(target, common)
		}
		out = append(out, realPath(common))
	}
	return out
}

// readPointer reads a small regular file (a .git file, a commondir) and
// returns its first line without prefix, which it must start with.
func readPointer(g *pathguard.Guard, path, prefix string) (string, bool) {
	var data []byte
	if _, err := g.Name(path); err == nil {
		d, _, err := g.ReadFile(path, 4096)
		if err != nil {
			return "", false
		}
		data = d
	} else {
		// Above the root: read it only if it is a small regular file.
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return "", false
		}
		defer f.Close()
		if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
			return "", false
		}
		data, _ = io.ReadAll(io.LimitReader(f, 4096))
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	s := strings.TrimSpace(string(line))
	if !strings.HasPrefix(s, prefix) {
		return "", false
	}
	s = strings.TrimSpace(s[len(prefix):])
	return s, s != ""
}

// realPath is p absolute with the links of its existing part resolved, so
// it compares with paths the guard resolved.
func realPath(p string) string {
	p, _ = filepath.Abs(p)
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}
