package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// Merging a worktree worker's branch into the root's current branch. The
// merge or cherry-pick is made in a temporary worktree at the root's HEAD,
// never in the root's checkout: on a conflict it is abandoned there, and
// the root's branch, index and files are as they were. A clean result is
// then brought into the root by a fast-forward, which git refuses, again
// changing nothing, when it would overwrite an untracked file. Every git
// command here runs without the repository's hooks and fsmonitor, and with
// every filter and merge driver its configuration names switched off:
// content is checked out and merged as stored, and no program the
// checkout names is run.

// Merged is what a merge did.
type Merged struct {
	Into     string // the root's branch
	Strategy string // fast-forward, merge or cherry-pick
	Commits  int    // the worker's commits brought in
	Head     string // the root's new HEAD
	Files    []string
	Removed  bool   // the worktree and branch were removed
	KeptWhy  string // why they were kept
}

// ConflictError is a merge that was not applied because of conflicts;
// ID, the worker's, is the caller's to set.
type ConflictError struct {
	ID, Branch, Into, Strategy string
	Files                      []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s of %s's branch %s into %s conflicts in %s: %s. Nothing was applied: the root's branch, index and files are as they were. "+
		"Resolve by hand (git merge %s in the root), or vibe_send the worker a message to rebase its work on the root's HEAD and merge again",
		e.Strategy, e.ID, e.Branch, e.Into, textcut.Count(len(e.Files), "file", "files"), strings.Join(e.Files, ", "), e.Branch)
}

// neutral are the -c settings that switch off every filter and merge
// driver the repository's configuration names (a .gitattributes file in
// the checkout picks them, and they run programs).
func neutral(ctx context.Context, repo string) []string {
	out, _, _ := gitExit(ctx, repo, nil, "config", "--name-only", "--get-regexp", `^(filter|merge)\.`)
	seen := map[string]bool{}
	var extra []string
	for _, key := range strings.Split(strings.TrimSpace(out), "\n") {
		section, rest, ok := strings.Cut(key, ".")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i <= 0 {
			continue
		}
		name := rest[:i]
		if seen[section+"."+name] {
			continue
		}
		seen[section+"."+name] = true
		if section == "filter" {
			extra = append(extra, "-c", "filter."+name+".smudge=", "-c", "filter."+name+".clean=", "-c", "filter."+name+".process=", "-c", "filter."+name+".required=false")
		} else {
			// A driver that only fails leaves the file conflicted, as a
			// content conflict does, and runs nothing of the checkout (an
			// empty one made git abort the whole merge with "cannot run").
			extra = append(extra, "-c", "merge."+name+".driver=exit 1")
		}
	}
	return extra
}

// Merge brings the worktree's commits into the root's current branch:
// replayed one by one with cherryPick, else a merge commit (or a
// fast-forward when the root has not moved). The worktree and its branch
// are removed after a clean merge unless keep.
func (iso Tree) Merge(cherryPick, keep bool) (Merged, error) {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo := iso.Repo
	nc := neutral(ctx, repo)
	g := func(dir string, args ...string) (string, error) {
		out, _, err := gitExit(ctx, dir, nc, args...)
		return strings.TrimSpace(out), err
	}
	ref, err := g(repo, "symbolic-ref", "-q", "HEAD")
	if err != nil || ref == "" {
		return Merged{}, errors.New("the root's HEAD is not on a branch (detached): check out the branch to merge into, then merge again")
	}
	into := strings.TrimPrefix(ref, "refs/heads/")
	head, err := g(repo, "rev-parse", "HEAD")
	if err != nil {
		return Merged{}, err
	}
	st, _, err := gitExit(ctx, repo, nc, "status", "--porcelain=v1", "-z", "--untracked-files=no")
	if err != nil {
		return Merged{}, fmt.Errorf("reading the root's changes: %w", err)
	}
	if changed, _ := parseStatus(st); len(changed) > 0 {
		return Merged{}, fmt.Errorf("the root has uncommitted changes in %s (%s): commit or stash them first, so that the merge changes only what the worker did",
			textcut.Count(len(changed), "file", "files"), names10(changed))
	}
	tip, err := g(repo, "rev-parse", "refs/heads/"+iso.Branch)
	if err != nil {
		return Merged{}, fmt.Errorf("the worker's branch %s is gone: %w", iso.Branch, err)
	}
	n, _ := g(repo, "rev-list", "--count", head+".."+tip)
	count, _ := strconv.Atoi(n)
	if count == 0 {
		msg := fmt.Sprintf("the worker's branch %s has no commits that %s lacks: nothing to merge", iso.Branch, into)
		if _, files, _ := iso.Report(); len(files) > 0 {
			msg += fmt.Sprintf(" (its worktree %s has uncommitted changes in %s; only commits are merged)", iso.Dir, names10(files))
		}
		return Merged{}, errors.New(msg)
	}
	res := Merged{Into: into, Commits: count}
	var result string
	ancestor := func() bool { _, err := g(repo, "merge-base", "--is-ancestor", head, tip); return err == nil }
	switch {
	case !cherryPick && ancestor():
		res.Strategy, result = "fast-forward", tip
	default:
		res.Strategy = "merge"
		if cherryPick {
			res.Strategy = "cherry-pick"
		}
		result, err = combine(ctx, nc, iso, head, tip, into, cherryPick)
		if err != nil {
			return Merged{}, err
		}
	}
	// The files this brings in, for the answer.
	if list, err := g(repo, "diff", "--no-ext-diff", "--no-textconv", "--name-only", head, result); err == nil && list != "" {
		res.Files = strings.Split(list, "\n")
	}
	if _, err := g(repo, "merge", "--ff-only", "--no-edit", "--quiet", result); err != nil {
		if now, _ := g(repo, "rev-parse", "HEAD"); now != head {
			return Merged{}, fmt.Errorf("the root's HEAD moved while merging; nothing was applied: merge again")
		}
		return Merged{}, fmt.Errorf("bringing the merge into the root failed, and git changed nothing: %w (an untracked file in the root that the merge would overwrite: move it away and merge again)", err)
	}
	res.Head = result
	if keep {
		res.KeptWhy = "keep was asked"
		return res, nil
	}
	if st, _, err := gitExit(ctx, iso.Dir, nc, "status", "--porcelain=v1", "-z", "--untracked-files=normal"); err != nil || st != "" {
		changed, untracked := parseStatus(st)
		res.KeptWhy = fmt.Sprintf("its worktree has uncommitted changes the merge did not bring in (%s)", names10(append(changed, untracked...)))
		if err != nil {
			res.KeptWhy = "its worktree's state could not be read: " + err.Error()
		}
		return res, nil
	}
	if iso.remove(ctx) {
		res.Removed = true
	} else {
		res.KeptWhy = "git could not remove the worktree"
	}
	return res, nil
}

// combine makes the merge commit, or replays the commits, in a temporary
// worktree at head, and returns the resulting commit; a conflict there is
// a *ConflictError, and the temporary worktree is removed either way.
func combine(ctx context.Context, nc []string, iso Tree, head, tip, into string, cherry bool) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(iso.Dir), "merge-")
	if err != nil {
		return "", err
	}
	os.Remove(tmp) // git makes it
	g := func(dir string, args ...string) (string, int, error) {
		out, code, err := gitExit(ctx, dir, nc, args...)
		return strings.TrimSpace(out), code, err
	}
	if _, _, err := g(iso.Repo, "worktree", "add", "--detach", "--quiet", tmp, head); err != nil {
		return "", fmt.Errorf("making a worktree to merge in: %w", err)
	}
	defer func() {
		if _, _, err := g(iso.Repo, "worktree", "remove", "--force", tmp); err != nil {
			os.RemoveAll(tmp)
			g(iso.Repo, "worktree", "prune")
		}
	}()
	var args []string
	strategy := "merge"
	if cherry {
		strategy = "cherry-pick"
		args = []string{"cherry-pick", "--allow-empty", "--keep-redundant-commits", head + ".." + tip}
	} else {
		args = []string{"merge", "--no-ff", "--no-edit", "-m", fmt.Sprintf("Merge branch '%s' into %s", iso.Branch, into), tip}
	}
	if _, _, err := g(tmp, args...); err != nil {
		conflicts, _, _ := g(tmp, "diff", "--name-only", "--diff-filter=U")
		if conflicts == "" {
			return "", fmt.Errorf("%s failed: %w", strategy, err)
		}
		return "", &ConflictError{Branch: iso.Branch, Into: into, Strategy: strategy, Files: strings.Split(conflicts, "\n")}
	}
	out, _, err := g(tmp, "rev-parse", "HEAD")
	return out, err
}

func names10(list []string) string {
	shown := list[:min(len(list), 10)]
	s := strings.Join(shown, ", ")
	if len(list) > len(shown) {
		s += fmt.Sprintf(" and %d more", len(list)-len(shown))
	}
	return s
}
