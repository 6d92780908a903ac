package vibetool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// vibe_merge through the tool surface, with real shell workers in real
// worktrees: a clean merge, each bad input, and its absence in plan mode.
func TestMergeTool(t *testing.T) {
	root := gitInit(t)
	for _, args := range [][]string{{"config", "user.name", "t"}, {"config", "user.email", "t@x"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	script, _ := filepath.Abs("../testdata/worker.sh")
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: map[string]string{"fast": script, "fast@plan": script}, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	call(t, r, "vibe_spawn", map[string]any{"brief": "commit", "label": "made", "isolation": "worktree"})
	call(t, r, "vibe_spawn", map[string]any{"brief": "hello", "label": "plain"})
	call(t, r, "vibe_wait", map[string]any{"worker_ids": []string{"w1", "w2"}, "mode": "all"})
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"worker_id": "w7"}, `no worker "w7"; the workers are w1, w2`},
		{map[string]any{"worker_id": "w2"}, "w2 did not run in a worktree (vibe_spawn started it with isolation none)"},
		{map[string]any{"worker_id": "w1", "strategy": "rebase"}, "must be one of"},
	} {
		if out, _, isErr := call(t, r, "vibe_merge", c.args); !isErr || !strings.Contains(out, c.want) {
			t.Errorf("%v: %v %s", c.args, isErr, out)
		}
	}
	os.WriteFile(filepath.Join(root, "dirty.txt"), []byte("x"), 0o644)
	exec.Command("git", "-C", root, "add", "dirty.txt").Run()
	if out, _, isErr := call(t, r, "vibe_merge", map[string]any{"worker_id": "w1"}); !isErr || !strings.Contains(out, "the root has uncommitted changes in 1 file (dirty.txt)") {
		t.Errorf("uncommitted root: %s", out)
	}
	exec.Command("git", "-C", root, "rm", "-q", "--cached", "dirty.txt").Run()
	os.Remove(filepath.Join(root, "dirty.txt"))
	// Plan mode has no vibe_merge: it is write tier.
	res, err := r.Call(context.Background(), tiers.Plan, "vibe_merge", json.RawMessage(`{"worker_id":"w1"}`))
	if err != nil || !res.IsError || !strings.Contains(registry.ResultText(res), "vibe_merge") {
		t.Errorf("plan mode: %v %s", err, registry.ResultText(res))
	}
	out, sc, isErr := call(t, r, "vibe_merge", map[string]any{"worker_id": "w1"})
	m, _ := sc["merge"].(map[string]any)
	if isErr || !strings.Contains(out, "w1's branch: 1 commit fast-forwarded into ") || !strings.Contains(out, "Files changed in the root: made.txt.") ||
		!strings.Contains(out, "Its worktree and branch were removed.") || m["strategy"] != "fast-forward" || m["removed"] != true {
		t.Fatalf("merge: %s %v", out, sc)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "made.txt")); string(b) != "made in a worktree\n" {
		t.Fatalf("made.txt: %q", b)
	}
	// A conflict: the answer names the file, and the root is unchanged.
	call(t, r, "vibe_spawn", map[string]any{"brief": "conflict", "label": "readme", "isolation": "worktree"})
	call(t, r, "vibe_wait", map[string]any{"worker_id": "w3"})
	os.WriteFile(filepath.Join(root, "README"), []byte("the root's README\n"), 0o644)
	exec.Command("git", "-C", root, "add", "README").Run()
	exec.Command("git", "-C", root, "commit", "-qm", "root's README").Run()
	head, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	out, _, isErr = call(t, r, "vibe_merge", map[string]any{"worker_id": "w3", "strategy": "cherry-pick"})
	if !isErr || !strings.Contains(out, "cherry-pick of w3's branch vibe/readme-w3-") || !strings.Contains(out, "conflicts in 1 file: README. Nothing was applied") {
		t.Fatalf("conflict: %s", out)
	}
	now, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	st, _ := exec.Command("git", "-C", root, "status", "--porcelain").Output()
	if b, _ := os.ReadFile(filepath.Join(root, "README")); string(now) != string(head) || len(st) != 0 || string(b) != "the root's README\n" {
		t.Fatalf("the root changed: %s %s %q", now, st, b)
	}
}
