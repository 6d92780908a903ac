package vibe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Worktree isolation: a worker that asks for it runs in its own git
// worktree, on a branch vibe/<label>-<id> from the root's HEAD, kept
// outside the root (in the state folder) so the checkout is never touched.
// Creation is serialized (git locks its config while adding a worktree).
// After a run the worktree stays while it holds commits or changes and is
// removed, with its branch, otherwise.

var worktreeMu sync.Mutex

type isolation struct {
	repo   string // the repository's top folder
	sub    string // the root's path inside it
	base   string // the commit the branch started from
	branch string
	dir    string // the worktree
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(out.String()), nil
}

var branchUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// repoOf says whether root is inside a git repository with a commit.
func repoOf(root string) (repo, sub, head string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, lerr := exec.LookPath("git"); lerr != nil {
		return "", "", "", errors.New("isolation \"worktree\" needs git, which is not on PATH")
	}
	repo, err = git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", "", fmt.Errorf("isolation \"worktree\" needs the root to be in a git repository, and %s is not (%v); spawn without isolation", root, err)
	}
	head, err = git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return "", "", "", fmt.Errorf("isolation \"worktree\" needs a commit to branch from: %v", err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	realRepo, _ := filepath.EvalSymlinks(repo)
	sub, _ = filepath.Rel(realRepo, realRoot)
	return repo, sub, head, nil
}

// addWorktree makes the worktree of worker id.
func addWorktree(stateDir, root, label, id string) (*isolation, error) {
	repo, sub, head, err := repoOf(root)
	if err != nil {
		return nil, err
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.Trim(branchUnsafe.ReplaceAllString(label, "-"), "-.")
	if name == "" {
		name = "worker"
	}
	iso := &isolation{repo: repo, sub: sub, base: head, branch: "vibe/" + name + "-" + id, dir: filepath.Join(stateDir, "worktrees", id)}
	if err := os.MkdirAll(filepath.Dir(iso.dir), 0o700); err != nil {
		return nil, err
	}
	if _, err := git(ctx, repo, "worktree", "add", "-b", iso.branch, iso.dir, head); err != nil {
		return nil, err
	}
	return iso, nil
}

// cwd is where the worker runs: the root's place in the worktree.
func (iso *isolation) cwd() string { return filepath.Join(iso.dir, iso.sub) }

// report says what the worker did in its worktree: its commits since the
// base, the files changed (committed or not) and a diffstat.
func (iso *isolation) report() (commits int, files []string, stat string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, err := git(ctx, iso.dir, "rev-list", "--count", iso.base+"..HEAD"); err == nil {
		commits, _ = strconv.Atoi(n)
	}
	// Untracked files count as changes: add them to the index's view
	// without staging their content (intent to add).
	git(ctx, iso.dir, "add", "-A", "-N")
	if names, err := git(ctx, iso.dir, "diff", "--name-only", iso.base); err == nil && names != "" {
		files = strings.Split(names, "\n")
	}
	stat, _ = git(ctx, iso.dir, "diff", "--stat", iso.base)
	return commits, files, stat
}

// cleanup removes the worktree and its branch when it holds nothing, and
// says whether it was kept.
func (iso *isolation) cleanup() bool {
	commits, files, _ := iso.report()
	if commits > 0 || len(files) > 0 {
		return true
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := git(ctx, iso.repo, "worktree", "remove", "--force", iso.dir); err != nil {
		return true
	}
	git(ctx, iso.repo, "branch", "-D", iso.branch)
	return false
}
