package vibetool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
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
	deadline := time.Now().Add(time.Minute)
	for {
		out, _ := first.call(t, "vibe_list", map[string]any{})
		branches, _ := exec.Command("git", "-C", root, "log", "--all", "--oneline").Output()
		if strings.Contains(out, "unread results: w1") && strings.Contains(string(branches), "held change") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers did not get going: %s\n%s", out, branches)
		}
		time.Sleep(50 * time.Millisecond)
	}
	first.cmd.Process.Signal(syscall.SIGKILL)
	first.cmd.Wait()

	second := startServe(t, env, args...)
	out, _ := second.call(t, "vibe_list", map[string]any{})
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
