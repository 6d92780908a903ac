// Package worktree is the git layer under vibe's workers: the worktree a
// worker that asks for isolation runs in (a branch of its own from the
// root's HEAD, kept outside the root), what the checkout held at spawn,
// what the worker did there, and the merge of its branch into the root's.
// Every git command runs without the repository's hooks, fsmonitor, filter
// and merge drivers, so nothing the checkout names is run. It knows nothing
// of rosters, records or tools.
package worktree

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

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// Worktree isolation: a worker that asks for it runs in its own git
// worktree, on a branch vibe/<label>-<id>-<suffix> from the root's HEAD at
// spawn, kept outside the root (in the state folder) so the checkout is
// never touched. The suffix is the roster's own, so a branch left by an
// earlier process never collides with a new one. Uncommitted changes of the
// checkout are not in the worktree; the spawn answer names them, and
// carry_changes brings those of tracked files over (a `git stash create`
// commit applied in the worktree: the user's working tree and stash list
// are not touched). Creation is serialized (git locks its config while
// adding a worktree). After a run the worktree stays while it holds commits
// or changes and is removed, with its branch, otherwise.

var worktreeMu sync.Mutex

// Tree is a worker's worktree; vibe keeps it in the worker's record.
type Tree struct {
	Repo string `json:"repo"` // the repository's top folder
	Sub  string `json:"sub"`  // the root's path inside it
	Base string `json:"base"` // the commit the branch started from
	// DiffBase is what the worker's changes are measured against: the
	// carried changes' stash commit, else Base.
	DiffBase string `json:"diff_base,omitempty"`
	Branch   string `json:"branch"`
	Dir      string `json:"dir"` // the worktree
}

// gitOutputLimit bounds what one git command's output may hold.
const gitOutputLimit = 8 << 20

// git runs git in dir. Nothing the repository configures to run is run:
// hooks (worktree add runs post-checkout), an fsmonitor, external diff
// drivers and text conversions, and the filter and merge drivers the
// configuration names (neutral) — a spawn from plan mode makes a worktree,
// and that must not run code from the checkout. Standard output is kept
// apart from error output, which only the error message quotes.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitRaw(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

// gitRaw is git with its output as printed.
func gitRaw(ctx context.Context, dir string, args ...string) (string, error) {
	out, _, err := gitExit(ctx, dir, neutral(ctx, dir), args...)
	return out, err
}

// gitExit is git with extra -c settings before args; it returns the
// output, and the exit status when git ran and exited non-zero (err is
// then set too).
func gitExit(ctx context.Context, dir string, extra []string, args ...string) (string, int, error) {
	full := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, extra...)
	full = append(full, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	cmd.Dir = proc.NeutralDir
	var out capped
	out.max = gitOutputLimit
	p, err := proc.Start(cmd, proc.Options{Stdout: &out, Grace: 500 * time.Millisecond, Drain: time.Second})
	if err != nil {
		return "", -1, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Kill()
		<-p.Done()
		return "", -1, fmt.Errorf("git %s did not finish in time", strings.Join(args, " "))
	}
	if err := p.Wait(); err != nil {
		msg := p.Tail().String()
		if msg == "" {
			msg = err.Error()
		}
		code := -1
		if st := p.State(); st != nil {
			code = st.ExitCode()
		}
		return out.b.String(), code, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.b.String(), 0, nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var branchUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Checkout is the root's repository as a worktree spawn finds it.
type Checkout struct {
	Repo, Sub, Head string
	// Uncommitted are the tracked files with changes not committed (staged
	// or not), Untracked the files git does not track; both relative to
	// the repository's top folder.
	Uncommitted, Untracked []string
	// Stash is the commit `git stash create` made of the uncommitted
	// changes, when they are carried.
	Stash string
}

// repoOf says whether root is inside a git repository with a commit.
func repoOf(ctx context.Context, root string) (repo, sub, head string, err error) {
	if _, lerr := exec.LookPath("git"); lerr != nil {
		return "", "", "", errors.New("isolation \"worktree\" needs git, which is not on PATH")
	}
	repo, err = git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", "", fmt.Errorf("isolation \"worktree\" needs the root to be in a git repository, and %s is not (%v)", root, err)
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

// Inspect reads the checkout a worktree worker starts from: its HEAD and
// its uncommitted files; with carry, it records the uncommitted changes of
// tracked files as a stash commit (which changes no ref, no index and no
// file).
func Inspect(root string, carry bool) (*Checkout, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	repo, sub, head, err := repoOf(ctx, root)
	if err != nil {
		return nil, err
	}
	co := &Checkout{Repo: repo, Sub: sub, Head: head}
	st, err := gitRaw(ctx, repo, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil {
		return nil, fmt.Errorf("reading the checkout's uncommitted changes: %w", err)
	}
	co.Uncommitted, co.Untracked = parseStatus(st)
	if carry && len(co.Uncommitted) > 0 {
		sha, err := git(ctx, repo, "stash", "create", "vibe: the checkout's uncommitted changes")
		if err != nil {
			return nil, fmt.Errorf("recording the uncommitted changes to carry: %w", err)
		}
		if sha != "" {
			// The stash's first parent is the HEAD it was made on, which a
			// commit since the rev-parse above may have moved.
			if base, err := git(ctx, repo, "rev-parse", sha+"^1"); err == nil {
				co.Head = base
			}
			co.Stash = sha
		}
	}
	return co, nil
}

// parseStatus splits `git status --porcelain=v1 -z` into tracked files
// with changes and untracked files.
func parseStatus(s string) (changed, untracked []string) {
	fields := strings.Split(s, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		xy, name := f[:2], f[3:]
		switch {
		case xy == "??":
			untracked = append(untracked, name)
		case xy == "!!":
		default:
			changed = append(changed, name)
			if xy[0] == 'R' || xy[0] == 'C' {
				i++ // the rename's source follows
			}
		}
	}
	return changed, untracked
}

// Add makes the worktree of worker id from co, in stateDir/worktrees/id,
// on a branch named by label, id and the roster's suffix.
func Add(stateDir string, co *Checkout, label, id, suffix string) (*Tree, error) {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.Trim(branchUnsafe.ReplaceAllString(label, "-"), "-.")
	if name == "" {
		name = "worker"
	}
	iso := &Tree{Repo: co.Repo, Sub: co.Sub, Base: co.Head, DiffBase: co.Head,
		Branch: "vibe/" + name + "-" + id + "-" + suffix, Dir: filepath.Join(stateDir, "worktrees", id)}
	if err := os.MkdirAll(filepath.Dir(iso.Dir), 0o700); err != nil {
		return nil, err
	}
	if _, err := git(ctx, co.Repo, "worktree", "add", "-b", iso.Branch, iso.Dir, co.Head); err != nil {
		return nil, err
	}
	if co.Stash != "" {
		if _, err := git(ctx, iso.Dir, "stash", "apply", "--quiet", co.Stash); err != nil {
			iso.remove(ctx)
			return nil, fmt.Errorf("carrying the uncommitted changes into the worktree: %w", err)
		}
		iso.DiffBase = co.Stash
	}
	return iso, nil
}

// Cwd is where the worker runs: the root's place in the worktree.
func (iso *Tree) Cwd() string { return filepath.Join(iso.Dir, iso.Sub) }

// Report says what the worker did in its worktree: its commits since the
// base, the files changed (committed or not, carried changes excluded) and
// a diffstat.
func (iso *Tree) Report() (commits int, files []string, stat string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, err := git(ctx, iso.Dir, "rev-list", "--count", iso.Base+"..HEAD"); err == nil {
		commits, _ = strconv.Atoi(n)
	}
	// Untracked files count as changes: add them to the index's view
	// without staging their content (intent to add).
	git(ctx, iso.Dir, "add", "-A", "-N")
	base := iso.DiffBase
	if base == "" {
		base = iso.Base
	}
	if names, err := git(ctx, iso.Dir, "diff", "--no-ext-diff", "--no-textconv", "--name-only", base); err == nil && names != "" {
		files = strings.Split(names, "\n")
	}
	stat, _ = git(ctx, iso.Dir, "diff", "--no-ext-diff", "--no-textconv", "--stat", base)
	return commits, files, stat
}

// Cleanup removes the worktree and its branch when it holds nothing, and
// says whether it was kept.
func (iso *Tree) Cleanup() bool {
	commits, files, _ := iso.Report()
	if commits > 0 || len(files) > 0 {
		return true
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return !iso.remove(ctx)
}

// remove deletes the worktree and its branch; worktreeMu is held.
func (iso *Tree) remove(ctx context.Context) bool {
	if _, err := git(ctx, iso.Repo, "worktree", "remove", "--force", iso.Dir); err != nil {
		if _, serr := os.Stat(iso.Dir); serr == nil {
			return false
		}
		git(ctx, iso.Repo, "worktree", "prune")
	}
	git(ctx, iso.Repo, "branch", "-D", iso.Branch)
	return true
}

// Exists says whether the worktree's folder is still there.
func (iso *Tree) Exists() bool {
	fi, err := os.Stat(iso.Dir)
	return err == nil && fi.IsDir()
}
