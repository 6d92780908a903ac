package vibetool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serve is a `builtin-tools serve` over stdio and its process.
type serve struct {
	c   *client.Client
	cmd *exec.Cmd
}

func startServe(t *testing.T, env []string, args ...string) *serve {
	t.Helper()
	bin := testenv.Command(t)
	s := &serve{}
	tr := transport.NewStdioWithOptions(bin, env, append([]string{"serve"}, args...),
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			s.cmd = exec.Command(command, args...)
			s.cmd.Env = append(os.Environ(), env...)
			return s.cmd, nil
		}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.c = client.NewClient(tr)
	t.Cleanup(func() { s.c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "vibe-restart", Version: "1"}
	if _, err := s.c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *serve) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func gitInit(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return root
}

// M5: a serve killed with SIGKILL leaves a finished, unread worker and a
// running worktree worker; the next serve over the same root lists both
// (the running one as lost, with its branch), the unread result is
// readable, and a new worktree spawn succeeds.
func TestWorkersSurviveServeKill(t *testing.T) {
	root := gitInit(t)
	script, _ := filepath.Abs("../testdata/worker.sh")
	env := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	args := []string{"--root", root, "--without", "lsp,code_graph", "--vibe", "--worker-command", "fast=" + script}
	first := startServe(t, env, args...)
	if out, isErr := first.call(t, "vibe_spawn", map[string]any{"brief": "quick answer", "label": "quick"}); isErr {
		t.Fatalf("spawn: %s", out)
	}
	if out, isErr := first.call(t, "vibe_spawn", map[string]any{"brief": "hold", "label": "wt", "isolation": "worktree"}); isErr {
		t.Fatalf("spawn: %s", out)
	}
	// Wait until w1 has ended and w2 has committed.
	var out string
	var branches []byte
	if !testenv.Until(time.Minute, func() bool {
		out, _ = first.call(t, "vibe_list", map[string]any{})
		branches, _ = exec.Command("git", "-C", root, "log", "--all", "--oneline").Output()
		return strings.Contains(out, "unread results: w1") && strings.Contains(string(branches), "held change")
	}) {
		t.Fatalf("the workers did not get going: %s\n%s", out, branches)
	}
	first.cmd.Process.Signal(syscall.SIGKILL)
	first.cmd.Wait()

	second := startServe(t, env, args...)
	out, _ = second.call(t, "vibe_list", map[string]any{})
	t.Logf("the new serve lists:\n%s", out)
	if !strings.Contains(out, `w1 "quick" [fast] succeeded`) || !strings.Contains(out, `w2 "wt" [fast] lost`) || !strings.Contains(out, "branch vibe/wt-w2-") {
		t.Fatalf("the new serve lists:\n%s", out)
	}
	out, _ = second.call(t, "vibe_wait", map[string]any{"worker_ids": []string{"w1"}})
	if !strings.Contains(out, "done (w1 quick fast): quick answer") {
		t.Fatalf("the unread result:\n%s", out)
	}
	out, isErr := second.call(t, "vibe_spawn", map[string]any{"brief": "write", "label": "wt", "isolation": "worktree"})
	if isErr || !strings.Contains(out, "started w3") {
		t.Fatalf("a new worktree spawn: %s", out)
	}
	out, _ = second.call(t, "vibe_wait", map[string]any{"worker_ids": []string{"w3"}})
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("the new worktree worker:\n%s", out)
	}
}

// Issue 19 §4: serve exits normally (its input closes) with a worker
// running in a worktree that holds nothing, and one whose worktree holds a
// commit. The first is gone from git worktree list with its branch, the
// second stays, and the next serve's first answer says which it kept and
// why. Once every record is gone, so is the root's state folder.
func TestServeExitRemovesIdleWorktrees(t *testing.T) {
	root := gitInit(t)
	script, _ := filepath.Abs("../testdata/worker.sh")
	state := t.TempDir()
	args := []string{"--root", root, "--without", "lsp,code_graph", "--vibe", "--worker-command", "fast=" + script, "--vibe-state", state}
	first := startServe(t, nil, args...)
	if out, isErr := first.call(t, "vibe_spawn", map[string]any{"brief": "sleep 30", "label": "idle", "isolation": "worktree"}); isErr {
		t.Fatalf("spawn: %s", out)
	}
	first.call(t, "vibe_spawn", map[string]any{"brief": "commit", "label": "made", "isolation": "worktree"})
	out, _ := first.call(t, "vibe_wait", map[string]any{"worker_id": "w2"})
	if !strings.Contains(out, "1 commits") && !strings.Contains(out, "1 commit,") {
		t.Fatalf("the committing worker:\n%s", out)
	}
	first.c.Close()
	first.cmd.Wait()
	list, _ := exec.Command("git", "-C", root, "worktree", "list").CombinedOutput()
	branches, _ := exec.Command("git", "-C", root, "branch", "--list", "vibe/*").CombinedOutput()
	t.Logf("after serve exited:\n%s%s", list, branches)
	if strings.Contains(string(list), "/worktrees/w1 ") || strings.Contains(string(branches), "vibe/idle-") {
		t.Fatalf("the idle worktree outlived serve:\n%s%s", list, branches)
	}
	if !strings.Contains(string(list), "/worktrees/w2 ") || !strings.Contains(string(branches), "vibe/made-w2-") {
		t.Fatalf("the worktree with a commit is gone:\n%s%s", list, branches)
	}

	second := startServe(t, nil, args...)
	out, _ = second.call(t, "vibe_wait", map[string]any{"worker_id": "w1"})
	t.Logf("the next serve's first answer:\n%s", out)
	if !strings.Contains(out, `earlier runs over this root kept 1 worktree, because they hold work: w2 "made"`) || !strings.Contains(out, "holds 1 commit and 1 file changed") ||
		!strings.Contains(out, "why: the run closed while it ran") {
		t.Fatalf("the next serve's first answer:\n%s", out)
	}
	if out, _ = second.call(t, "vibe_list", map[string]any{}); strings.Contains(out, "earlier runs over this root kept") {
		t.Fatalf("said twice:\n%s", out)
	}
	// Once the worktree is removed as the answer says, nothing is left.
	wt := filepath.Join(state, "*", "worktrees", "w2")
	dirs, _ := filepath.Glob(wt)
	if len(dirs) != 1 {
		t.Fatalf("no worktree at %s", wt)
	}
	if out, err := exec.Command("git", "-C", root, "worktree", "remove", "--force", dirs[0]).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	second.c.Close()
	second.cmd.Wait()
	// All that stays is the root's last id (issue 26) and its name.
	if left, _ := filepath.Glob(filepath.Join(state, "*", "*")); len(left) != 2 || filepath.Base(left[0]) != "last-id" || filepath.Base(left[1]) != "root" {
		t.Fatalf("the state folder still holds %v", left)
	}
}

// Issue 26: a worker id names one worker over a root, never two, across
// serve processes: after one whose workers were all read exited (leaving
// no record), and after one was killed, the next goes on from the last id.
func TestIDsGoOnAcrossServes(t *testing.T) {
	root := t.TempDir()
	script, _ := filepath.Abs("../testdata/worker.sh")
	args := []string{"--root", root, "--without", "lsp,code_graph", "--vibe", "--worker-command", "fast=" + script, "--vibe-state", t.TempDir()}
	for i, end := range []string{"exit", "kill", ""} {
		s := startServe(t, nil, args...)
		want := fmt.Sprintf("w%d", i+1)
		if out, isErr := s.call(t, "vibe_spawn", map[string]any{"brief": "answer", "label": end}); isErr || !strings.Contains(out, "started "+want) {
			t.Fatalf("serve %d's first spawn (want %s): %s", i+1, want, out)
		}
		if out, _ := s.call(t, "vibe_wait", map[string]any{"worker_ids": []string{want}}); !strings.Contains(out, "done ("+want+" "+end) {
			t.Fatalf("serve %d's worker: %s", i+1, out)
		}
		switch end {
		case "exit":
			s.c.Close()
			s.cmd.Wait()
		case "kill":
			s.cmd.Process.Signal(syscall.SIGKILL)
			s.cmd.Wait()
		}
	}
}

// Issue 19 §4: a run's Close has no result, so what it keeps goes to the
// peers still connected, as a log message.
func TestCloseLogsWhatItKept(t *testing.T) {
	root := gitInit(t)
	script, _ := filepath.Abs("../testdata/worker.sh")
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: map[string]string{"fast": script}, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	c := runtest.Client(t, r, tiers.Normal)
	logs := make(chan string, 8)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" {
			b, _ := json.Marshal(n.Params)
			logs <- string(b)
		}
	})
	req := mcp.SetLevelRequest{}
	req.Params.Level = mcp.LoggingLevelInfo
	//lint:ignore SA1019 the run still serves clients of revisions with logging
	if err := c.SetLevel(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	call(t, r, "vibe_spawn", map[string]any{"brief": "commit", "label": "made", "isolation": "worktree"})
	call(t, r, "vibe_wait", map[string]any{"worker_id": "w1"})
	r.Close()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-logs:
			if strings.Contains(l, "the run closed and kept 1 record") {
				if !strings.Contains(l, `w1 \"made\" (succeeded): its worktree `) || !strings.Contains(l, `"level":"notice"`) {
					t.Fatalf("the log: %s", l)
				}
				return
			}
		case <-deadline:
			t.Fatal("no log message said what Close kept")
		}
	}
}
