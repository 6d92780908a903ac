package vibetool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
	"github.com/mark3labs/mcp-go/mcp"
)

func gatedRun(t *testing.T, root, policy string, commands map[string]string) *registry.Run {
	t.Helper()
	pol, err := registry.ParsePolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Policy: pol, Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: commands, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func rootFiles(t *testing.T, root string) []string {
	t.Helper()
	ents, _ := os.ReadDir(root)
	var out []string
	for _, e := range ents {
		if e.Name() != ".git" {
			out = append(out, e.Name())
		}
	}
	return out
}

// H1: the report's attack. A plan or readonly call cannot start a worker
// whose command knows nothing of modes: `--worker-command fast=sh` and a
// brief that writes the root is refused, saying how to configure a
// command for the mode, and nothing is written.
func TestPlanModeSpawnNeedsAModeCommand(t *testing.T) {
	root := gitInit(t)
	r := gatedRun(t, root, "write=deny,exec=deny", map[string]string{"fast": "sh"})
	for _, mode := range []tiers.Mode{tiers.Plan, tiers.ReadOnly} {
		out, isErr := runtest.Call(t, r, mode, "vibe_spawn", map[string]any{"brief": "echo pwned > written-in-" + string(mode), "label": "x"})
		if !isErr || !strings.Contains(out, "fast@"+string(mode)+"='CMD'") {
			t.Errorf("%s spawn with a command for normal mode only: error=%v %s", mode, isErr, out)
		}
	}
	// A worker started in normal mode cannot be run again from plan mode
	// by a command that is not the plan one.
	out, isErr := runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "echo normal", "label": "n"})
	if isErr {
		t.Fatalf("normal spawn: %s", out)
	}
	out, isErr = runtest.Call(t, r, tiers.Plan, "vibe_send", map[string]any{"worker_id": "w1", "message": "echo pwned > sent-in-plan"})
	if !isErr || !strings.Contains(out, "fast@plan") {
		t.Errorf("send from plan mode: error=%v %s", isErr, out)
	}
	// Every worker there is (only w1) has ended: what one could write is
	// written.
	if out, _ := runtest.Call(t, r, tiers.Normal, "vibe_wait", map[string]any{"mode": "all"}); !strings.Contains(out, "w1") || strings.Contains(out, "w2") {
		t.Fatalf("wait for every worker: %s", out)
	}
	if f := rootFiles(t, root); len(f) != 0 {
		t.Fatalf("the root holds %v", f)
	}
}

// H1: a worker gets the caller's mode and the run's policy, and a worker
// whose own tools honour them (here builtin-tools serve) cannot write the
// root from a plan-mode spawn. isolation none is refused outside normal
// mode; the same worker from normal mode writes when the policy allows.
func TestPlanWorkerCannotWriteTheRoot(t *testing.T) {
	t.Setenv("BUILTIN_TOOLS_BIN", testenv.Command(t))
	script, _ := filepath.Abs("testdata/mcp-worker.sh")
	cmds := map[string]string{"fast": script, "fast@plan": script, "fast@readonly": script + " # {mode} {approve}"}
	root := gitInit(t)
	r := gatedRun(t, root, "write=deny,exec=deny", cmds)

	out, isErr := runtest.Call(t, r, tiers.Plan, "vibe_spawn", map[string]any{"brief": "pwned.txt", "label": "p", "isolation": "none"})
	if !isErr || !strings.Contains(out, "worktree") {
		t.Fatalf("isolation none from plan mode: error=%v %s", isErr, out)
	}
	for i, mode := range []tiers.Mode{tiers.Plan, tiers.ReadOnly} {
		out, isErr = runtest.Call(t, r, mode, "vibe_spawn", map[string]any{"brief": "pwned.txt", "label": "p"})
		if isErr || !strings.Contains(out, "in "+string(mode)+" mode") || !strings.Contains(out, "worktree of its own") {
			t.Fatalf("%s spawn: %s", mode, out)
		}
		id := "w" + strconv.Itoa(i+1)
		out, _ = runtest.Call(t, r, mode, "vibe_wait", map[string]any{"worker_ids": []string{id}})
		t.Logf("%s worker:\n%s", mode, out)
		if !strings.Contains(out, "not available in "+string(mode)+" mode") || !strings.Contains(out, "mode "+string(mode)+", policy write=deny,exec=deny") {
			t.Fatalf("the %s worker's write was not refused by its own tools:\n%s", mode, out)
		}
		if strings.Contains(out, "branch vibe/") {
			t.Fatalf("the %s worker changed its worktree:\n%s", mode, out)
		}
	}
	if mode := "readonly"; !strings.Contains(func() string { o, _ := runtest.Call(t, r, tiers.Normal, "vibe_list", map[string]any{}); return o }(), "# "+mode+" write=deny,exec=deny") {
		t.Errorf("{mode} and {approve} were not put in the command line")
	}
	// In normal mode the worker's gate is the run's policy: denied here.
	runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "pwned.txt", "label": "n"})
	out, _ = runtest.Call(t, r, tiers.Normal, "vibe_wait", map[string]any{"worker_ids": []string{"w3"}})
	if !strings.Contains(out, "deny") || !strings.Contains(out, "mode normal") {
		t.Fatalf("normal mode under write=deny:\n%s", out)
	}
	if f := rootFiles(t, root); len(f) != 0 {
		t.Fatalf("the root holds %v", f)
	}
	// The control: allowed, the same worker writes the root.
	open := gatedRun(t, root, "", cmds)
	runtest.Call(t, open, tiers.Normal, "vibe_spawn", map[string]any{"brief": "pwned.txt", "label": "n"})
	out, _ = runtest.Call(t, open, tiers.Normal, "vibe_wait", map[string]any{"mode": "all"})
	if _, err := os.Stat(filepath.Join(root, "pwned.txt")); err != nil {
		t.Fatalf("the control worker did not write: %v\n%s", err, out)
	}
}

// L6: a worktree worker's spawn answer says the worktree is at HEAD and
// names the checkout's uncommitted files; carry_changes brings them.
func TestSpawnNamesUncommittedChanges(t *testing.T) {
	root := gitInit(t)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("committed\n"), 0o644)
	exec.Command("git", "-C", root, "add", "a.txt").Run()
	exec.Command("git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "a").Run()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("committed\nuncommitted\n"), 0o644)
	os.WriteFile(filepath.Join(root, "new.txt"), []byte("new\n"), 0o644)
	r := gatedRun(t, root, "", map[string]string{"fast": "cat a.txt #"})
	out, isErr := runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "x", "label": "plain", "isolation": "worktree"})
	if isErr || !strings.Contains(out, "at the root's HEAD") || !strings.Contains(out, "Not in it: the uncommitted changes of 1 file of the checkout (a.txt); carry_changes: true brings them.") ||
		!strings.Contains(out, "new.txt") {
		t.Fatalf("spawn without carry:\n%s", out)
	}
	out, _ = runtest.Call(t, r, tiers.Normal, "vibe_wait", map[string]any{"worker_ids": []string{"w1"}})
	if strings.Contains(out, "uncommitted") {
		t.Fatalf("the worktree had the uncommitted line without carry:\n%s", out)
	}
	out, isErr = runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "x", "label": "carry", "isolation": "worktree", "carry_changes": true})
	if isErr || !strings.Contains(out, "Carried into it: the uncommitted changes of 1 file (a.txt).") {
		t.Fatalf("spawn with carry:\n%s", out)
	}
	out, _ = runtest.Call(t, r, tiers.Normal, "vibe_wait", map[string]any{"worker_ids": []string{"w2"}})
	if !strings.Contains(out, "uncommitted") || strings.Contains(out, "branch vibe/") {
		t.Fatalf("the carried worker (it changed nothing of its own):\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "committed\nuncommitted\n" {
		t.Fatalf("the checkout's file changed: %q", b)
	}
	if st, _ := exec.Command("git", "-C", root, "stash", "list").Output(); len(st) != 0 {
		t.Fatalf("the stash list changed: %s", st)
	}
}

// L5: a worker's setsid child ends with the run.
func TestRunCloseEndsSetsidChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	r := gatedRun(t, t.TempDir(), "", map[string]string{"fast": "sh"})
	runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "setsid sleep 300 & echo $! > " + pidFile + "; sleep 300", "label": "long"})
	pid := testenv.PidFile(t, pidFile)
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return in 30 s")
	}
	if !testenv.Gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the worker's setsid child %d outlived the run", pid)
	}
}

// H1: outside a git repository a plan-mode spawn is refused, saying why a
// worktree is needed.
func TestPlanModeSpawnOutsideGit(t *testing.T) {
	r := gatedRun(t, t.TempDir(), "", map[string]string{"fast@plan": "sh"})
	out, isErr := runtest.Call(t, r, tiers.Plan, "vibe_spawn", map[string]any{"brief": "echo hi", "label": "x"})
	if !isErr || !strings.Contains(out, "plan mode runs in a git worktree") || !strings.Contains(out, "git repository") {
		t.Fatalf("plan spawn outside git: error=%v %s", isErr, out)
	}
	out, isErr = runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "echo hi", "label": "x"})
	if !isErr || !strings.Contains(out, "no worker command for normal mode") {
		t.Fatalf("normal spawn with a plan command only: error=%v %s", isErr, out)
	}
}

// Issue 19 §3: refusing, from plan mode, to run again a worker that runs
// in the root names the tool whose argument put it there (vibe_send has no
// isolation), and every snake_case name in the text is an argument.
func TestPlanSendToARootWorker(t *testing.T) {
	r := gatedRun(t, gitInit(t), "", map[string]string{"fast": "sh", "fast@plan": "sh"})
	if out, isErr := runtest.Call(t, r, tiers.Normal, "vibe_spawn", map[string]any{"brief": "echo hi", "label": "n", "isolation": "none"}); isErr {
		t.Fatal(out)
	}
	runtest.Call(t, r, tiers.Normal, "vibe_wait", map[string]any{"worker_id": "w1"})
	out, isErr := runtest.Call(t, r, tiers.Plan, "vibe_send", map[string]any{"worker_id": "w1", "message": "again"})
	if !isErr || !strings.Contains(out, "vibe_spawn started it with isolation none") {
		t.Fatalf("send from plan mode to a root worker: error=%v %s", isErr, out)
	}
	c := runtest.Client(t, r, tiers.Plan)
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if bad := sessiontest.UnknownArguments(tools.Tools, "vibe_send", out, nil); len(bad) > 0 {
		t.Fatalf("names %v, no argument of vibe_send: %s", bad, out)
	}
}
