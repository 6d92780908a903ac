package vibe

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/vibe/worktree"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// mergeRepo is a repository whose user can commit (a merge commit needs
// an identity).
func mergeRepo(t *testing.T) string {
	root := gitRepo(t)
	gitOut(t, root, "config", "user.name", "t")
	gitOut(t, root, "config", "user.email", "t@x")
	return root
}

func finished(t *testing.T, r *Roster, brief string, worktree bool) Info {
	t.Helper()
	in, err := r.Spawn(SpawnRequest{Brief: brief, Label: "m", Worktree: worktree})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := wait(t, r, true, time.Minute, in.ID)
	if done[0].Status != Succeeded {
		t.Fatalf("worker: %+v", done[0])
	}
	return done[0]
}

// rootState is what a merge that applies nothing must leave alone: the
// branch's commit, the index, the status and the files.
func rootState(t *testing.T, root string) string {
	t.Helper()
	readme, _ := os.ReadFile(filepath.Join(root, "README"))
	return gitOut(t, root, "rev-parse", "HEAD") + "\n" + gitOut(t, root, "ls-files", "-s") + "\n" +
		gitOut(t, root, "status", "--porcelain", "--untracked-files=all") + "\n" + string(readme)
}

// Issue 22 §3: a worker's commits reach the root's branch by a
// fast-forward when the root did not move, else by a merge commit or a
// cherry-pick; the worktree and branch are removed unless kept.
func TestMergeWorkerBranch(t *testing.T) {
	root := mergeRepo(t)
	r := isoRoster(t, root)
	a := finished(t, r, "commit", true)
	res, err := r.Merge(MergeRequest{ID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy != "fast-forward" || res.Into != "master" && res.Into != "main" || res.Commits != 1 || !res.Removed ||
		strings.Join(res.Files, ",") != "made.txt" || res.Worker.Worktree != "" || res.Head != gitOut(t, root, "rev-parse", "HEAD") {
		t.Fatalf("fast-forward: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "made.txt")); string(b) != "made in a worktree\n" {
		t.Fatalf("made.txt in the root: %q", b)
	}
	if _, err := os.Stat(a.Worktree); !os.IsNotExist(err) || gitOut(t, root, "branch", "--list", a.Branch) != "" {
		t.Fatalf("the worktree %s or branch %s is still there", a.Worktree, a.Branch)
	}
	if _, err := r.Merge(MergeRequest{ID: a.ID}); err == nil || !strings.Contains(err.Error(), "has no worktree any more") {
		t.Fatalf("merging again: %v", err)
	}

	// The root moves on: a merge commit, kept on request.
	b := finished(t, r, "another", true)
	os.WriteFile(filepath.Join(root, "other.txt"), []byte("root\n"), 0o644)
	gitOut(t, root, "add", "other.txt")
	gitOut(t, root, "commit", "-qm", "root moves")
	res, err = r.Merge(MergeRequest{ID: b.ID, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy != "merge" || res.Removed || res.KeptWhy != "keep was asked" || gitOut(t, root, "rev-list", "--count", "--merges", "HEAD^..HEAD") != "1" {
		t.Fatalf("merge: %+v", res)
	}
	if _, err := os.Stat(b.Worktree); err != nil {
		t.Fatalf("the kept worktree: %v", err)
	}
	if wt := gitOut(t, root, "worktree", "list"); strings.Contains(wt, "merge-") {
		t.Fatalf("a temporary worktree was left: %s", wt)
	}

	// Cherry-pick: the worker's commit replayed, no merge commit.
	c := finished(t, r, "conflict", true)
	before := gitOut(t, root, "rev-parse", "HEAD")
	res, err = r.Merge(MergeRequest{ID: c.ID, CherryPick: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy != "cherry-pick" || gitOut(t, root, "rev-parse", "HEAD^") != before || gitOut(t, root, "log", "-1", "--format=%s") != "worker's README" {
		t.Fatalf("cherry-pick: %+v", res)
	}
}

// conflicted merges a worker's README over a root whose README changed
// too, and checks the conflict is named and nothing was applied.
func conflicted(t *testing.T, r *Roster, root string, cherry bool) {
	t.Helper()
	w := finished(t, r, "conflict", true)
	os.WriteFile(filepath.Join(root, "README"), []byte("the root's README\n"), 0o644)
	gitOut(t, root, "commit", "-qam", "root's README")
	before := rootState(t, root)
	_, err := r.Merge(MergeRequest{ID: w.ID, CherryPick: cherry})
	var ce *worktree.ConflictError
	if !errors.As(err, &ce) || strings.Join(ce.Files, ",") != "README" || !strings.Contains(err.Error(), "conflicts in 1 file: README. Nothing was applied") {
		t.Fatalf("cherry-pick %v: %v", cherry, err)
	}
	if after := rootState(t, root); after != before {
		t.Fatalf("the root changed:\n%s\n---\n%s", before, after)
	}
}

// A conflict applies nothing: the root's branch, index, status and files
// are as they were, and the conflicting files are named.
func TestMergeConflictAppliesNothing(t *testing.T) {
	for _, cherry := range []bool{false, true} {
		root := mergeRepo(t)
		r := isoRoster(t, root)
		conflicted(t, r, root, cherry)
		if wt := gitOut(t, root, "worktree", "list"); strings.Contains(wt, "merge-") {
			t.Fatalf("a temporary worktree was left: %s", wt)
		}
		if l := r.List(); l[0].Worktree == "" {
			t.Fatalf("the worktree was dropped after a conflict: %+v", l[0])
		}
	}
}

// Each bad input is refused with what to do, and changes nothing.
func TestMergeBadInput(t *testing.T) {
	root := mergeRepo(t)
	r := isoRoster(t, root)
	if _, err := r.Merge(MergeRequest{ID: "w9"}); err == nil || !strings.Contains(err.Error(), "no worker \"w9\"") {
		t.Errorf("unknown worker: %v", err)
	}
	plain := finished(t, r, "hello", false)
	if _, err := r.Merge(MergeRequest{ID: plain.ID}); err == nil || !strings.Contains(err.Error(), "did not run in a worktree") {
		t.Errorf("no worktree: %v", err)
	}
	w := finished(t, r, "commit", true)
	os.WriteFile(filepath.Join(root, "README"), []byte("edited, not committed\n"), 0o644)
	before := rootState(t, root)
	if _, err := r.Merge(MergeRequest{ID: w.ID}); err == nil || !strings.Contains(err.Error(), "the root has uncommitted changes in 1 file (README): commit or stash them first") {
		t.Errorf("uncommitted root: %v", err)
	}
	if rootState(t, root) != before {
		t.Errorf("a refused merge changed the root")
	}
	gitOut(t, root, "checkout", "README")
	// An untracked file the merge would overwrite: git refuses, nothing changes.
	os.WriteFile(filepath.Join(root, "made.txt"), []byte("mine\n"), 0o644)
	before = rootState(t, root)
	if _, err := r.Merge(MergeRequest{ID: w.ID}); err == nil || !strings.Contains(err.Error(), "git changed nothing") {
		t.Errorf("untracked file in the way: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "made.txt")); string(b) != "mine\n" || rootState(t, root) != before {
		t.Errorf("the untracked file or the root changed: %q", b)
	}
	os.Remove(filepath.Join(root, "made.txt"))
	running, err := r.Spawn(SpawnRequest{Brief: "sleep 30", Label: "slow", Worktree: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Merge(MergeRequest{ID: running.ID}); err == nil || !strings.Contains(err.Error(), "vibe_wait for it to end") {
		t.Errorf("running worker: %v", err)
	}
	r.Kill(running.ID)
	gitOut(t, root, "checkout", "-q", "--detach")
	if _, err := r.Merge(MergeRequest{ID: w.ID}); err == nil || !strings.Contains(err.Error(), "not on a branch") {
		t.Errorf("detached root: %v", err)
	}
}

// The repository's filter drivers never run: a worker's branch whose
// attributes pick one is merged and checked out as stored.
func TestMergeRunsNoFilter(t *testing.T) {
	root := mergeRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	gitOut(t, root, "config", "filter.evil.smudge", "touch "+marker+"; cat")
	gitOut(t, root, "config", "filter.evil.clean", "touch "+marker+"; cat")
	gitOut(t, root, "config", "filter.evil.process", "touch "+marker)
	r := isoRoster(t, root)
	w := finished(t, r, "filtered", true)
	if _, err := r.Merge(MergeRequest{ID: w.ID}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "data.dat")); string(b) != "data\n" {
		t.Fatalf("data.dat: %q", b)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the repository's filter driver ran")
	}
}

// R17 (L-9 of the third attack): a file whose attributes pick the
// repository's merge driver (never run) conflicts like any other when
// both sides changed it: the conflict names it, instead of git's "cannot
// run" of the switched-off driver, and nothing is applied.
func TestMergeDriverConflictIsListed(t *testing.T) {
	for _, cherry := range []bool{false, true} {
		root := mergeRepo(t)
		marker := filepath.Join(t.TempDir(), "ran")
		gitOut(t, root, "config", "merge.evil.driver", "touch "+marker+"; false")
		os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("README merge=evil\n"), 0o644)
		gitOut(t, root, "add", ".gitattributes")
		gitOut(t, root, "commit", "-qm", "README has a merge driver")
		r := isoRoster(t, root)
		conflicted(t, r, root, cherry)
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the repository's merge driver ran")
		}
	}
}
