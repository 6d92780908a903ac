package vibe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for worktree isolation and is not on PATH")
	}
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(root, "README"), []byte("hello\n"), 0o644)
	exec.Command("git", "-C", root, "add", "README").Run()
	exec.Command("git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "readme").Run()
	return root
}

func isoRoster(t *testing.T, root string) *Roster {
	t.Helper()
	script, _ := filepath.Abs("testdata/worker.sh")
	r, err := New(Config{StateDir: t.TempDir(), Dir: root, Backends: map[string]runner.Backend{"fast": runner.Command{Line: script}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A worker in a worktree changes its branch, never the root; the result
// names the branch, the files and a diffstat; a worktree with changes is
// kept, one without is removed with its branch.
func TestWorktreeIsolation(t *testing.T) {
	root := gitRepo(t)
	r := isoRoster(t, root)
	wr, err := r.Spawn(SpawnRequest{Brief: "write", Label: "docs fix", Worktree: true})
	if err != nil {
		t.Fatal(err)
	}
	cm, _ := r.Spawn(SpawnRequest{Brief: "commit", Label: "feature", Worktree: true})
	none, _ := r.Spawn(SpawnRequest{Brief: "nothing to change", Label: "idle", Worktree: true})
	done, _ := wait(t, r, true, time.Minute, wr.ID, cm.ID, none.ID)
	by := map[string]Info{}
	for _, d := range done {
		by[d.ID] = d
	}
	if b, _ := os.ReadFile(filepath.Join(root, "README")); string(b) != "hello\n" {
		t.Fatalf("the root's README changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err == nil {
		t.Fatal("a worker's commit landed in the root")
	}
	w := by[wr.ID]
	if w.Status != Succeeded || !strings.HasPrefix(w.Branch, "vibe/docs-fix-w1-") || len(w.FilesChanged) != 1 || w.FilesChanged[0] != "README" || !strings.Contains(w.Diffstat, "1 insertion") || w.Worktree == "" {
		t.Fatalf("writing worker: %+v", w)
	}
	if !strings.HasPrefix(w.Result, "wrote README in "+w.Worktree) {
		t.Fatalf("the worker did not run in its worktree: %q", w.Result)
	}
	c := by[cm.ID]
	if c.Commits != 1 || !strings.HasPrefix(c.Branch, "vibe/feature-w2-") || len(c.FilesChanged) != 1 || c.FilesChanged[0] != "made.txt" {
		t.Fatalf("committing worker: %+v", c)
	}
	if out, _ := exec.Command("git", "-C", root, "log", "--oneline", c.Branch).Output(); !strings.Contains(string(out), "worker's change") {
		t.Fatalf("the branch lacks the commit: %s", out)
	}
	n := by[none.ID]
	if n.Worktree != "" || n.Branch != "" {
		t.Fatalf("an unchanged worktree was kept: %+v", n)
	}
	if out, _ := exec.Command("git", "-C", root, "branch", "--list", "vibe/idle-w3-*").Output(); len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("the unchanged worker's branch was kept: %s", out)
	}
}

func TestWorktreeOutsideGit(t *testing.T) {
	r := isoRoster(t, t.TempDir())
	if _, err := r.Spawn(SpawnRequest{Brief: "write", Worktree: true}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Fatalf("isolation outside git: %v", err)
	}
}

func worktreeList(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "worktree", "list", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git worktree list: %v %s", err, out)
	}
	return string(out)
}

// Issue 19 §4: when the run closes, a worktree that holds no work (its
// worker still running, no commit, no change) is gone from git worktree
// list with its branch; one with a commit stays, Close says which and why,
// and the next roster over the folder says it in its first answer, once.
func TestCloseRemovesIdleWorktreesAndReportsKept(t *testing.T) {
	root := gitRepo(t)
	state := t.TempDir()
	script, _ := filepath.Abs("testdata/worker.sh")
	cfg := Config{StateDir: state, Dir: root, Backends: map[string]runner.Backend{"fast": runner.Command{Line: script, Grace: 500 * time.Millisecond}}}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	idle, _ := r.Spawn(SpawnRequest{Brief: "sleep 30", Label: "idle", Worktree: true})
	made, _ := r.Spawn(SpawnRequest{Brief: "commit", Label: "made", Worktree: true})
	done, _ := wait(t, r, true, time.Minute, made.ID)
	if done[0].Commits != 1 || done[0].Worktree == "" {
		t.Fatalf("the committing worker: %+v", done[0])
	}
	testenv.WaitFor(t, time.Minute, "the idle worker's worktree", func() bool {
		return strings.Contains(worktreeList(t, root), filepath.Join("worktrees", idle.ID))
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	list := worktreeList(t, root)
	if strings.Contains(list, filepath.Join("worktrees", idle.ID)) || strings.Contains(list, "vibe/idle-") {
		t.Fatalf("the idle worker's worktree is still listed:\n%s", list)
	}
	if !strings.Contains(list, done[0].Worktree) || !strings.Contains(list, done[0].Branch) {
		t.Fatalf("the worktree with a commit is gone:\n%s", list)
	}
	kept := KeptText(r.Kept())
	t.Logf("Close: %s", kept)
	if !strings.Contains(kept, `w2 "made" (succeeded): its worktree `+done[0].Worktree+` (branch `+done[0].Branch+`) holds 1 commit and 1 file changed`) ||
		!strings.Contains(kept, `w1 "idle" (killed): its result was not read`) || !strings.Contains(kept, "git worktree remove --force") {
		t.Fatalf("what Close kept: %s", kept)
	}
	next, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	first := strings.Join(next.Problems(), "\n")
	if !strings.Contains(first, `earlier runs over this root kept 1 worktree, because they hold work: w2 "made": its worktree `+done[0].Worktree) {
		t.Fatalf("the next roster's first answer: %q", first)
	}
	if again := next.Problems(); len(again) != 0 {
		t.Fatalf("said twice: %v", again)
	}
	if l := next.List(); len(l) != 2 || l[0].Why != "the run closed while it ran; the result is its output so far" {
		t.Fatalf("the next roster lists %+v", l)
	}
}
