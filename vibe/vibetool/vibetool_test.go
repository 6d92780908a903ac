package vibetool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

func newRun(t *testing.T, on bool) *registry.Run {
	t.Helper()
	script, _ := filepath.Abs("../testdata/worker.sh")
	r, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: on, Commands: map[string]string{"fast": script, "good": script + " --good"}, MaxRunning: 2, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func call(t *testing.T, r *registry.Run, tool string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := r.Call(context.Background(), tiers.Normal, tool, b)
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &sc)
	}
	return registry.ResultText(res), sc, res.IsError
}

func TestToolsEndToEnd(t *testing.T) {
	r := newRun(t, true)
	out, sc, isErr := call(t, r, "vibe_spawn", map[string]any{"brief": "tidy the imports", "label": "tidy"})
	if isErr || !strings.Contains(out, "started w1 \"tidy\" [fast]") || sc["worker"].(map[string]any)["backend"] == "" {
		t.Fatalf("spawn: %s %v", out, sc)
	}
	call(t, r, "vibe_spawn", map[string]any{"brief": "review it", "label": "review", "tier": "good"})
	// A result that arrives while nobody waits is announced by every answer.
	testenv.Until(time.Minute, func() bool {
		out, sc, _ = call(t, r, "vibe_list", map[string]any{})
		return len(sc["unread"].([]any)) == 2
	})
	if !strings.Contains(out, "unread results: w1, w2") || !strings.Contains(out, "succeeded") {
		t.Fatalf("list: %s", out)
	}
	out, sc, _ = call(t, r, "vibe_wait", map[string]any{"worker_ids": []string{"w1", "w2"}, "mode": "all"})
	if !strings.Contains(out, "done (w1 tidy fast): tidy the imports") || !strings.Contains(out, "done (w2 review good)") || len(sc["unread"].([]any)) != 0 {
		t.Fatalf("wait: %s", out)
	}
	call(t, r, "vibe_spawn", map[string]any{"brief": "sleep 30", "label": "slow"})
	out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_ids": []string{"w3"}, "timeout_seconds": 1})
	if !strings.Contains(out, "still running or queued: w3") {
		t.Fatalf("wait with a timeout: %s", out)
	}
	out, _, _ = call(t, r, "vibe_send", map[string]any{"worker_id": "w3", "message": "hurry"})
	if !strings.Contains(out, "was running: it was stopped and started again") {
		t.Fatalf("send: %s", out)
	}
	// Its second run says "working".
	testenv.WaitFor(t, time.Minute, "the second run's output", func() bool {
		out, _, _ = call(t, r, "vibe_list", map[string]any{})
		return strings.Contains(out, "working")
	})
	out, _, _ = call(t, r, "vibe_kill", map[string]any{"worker_id": "w3"})
	if !strings.Contains(out, "w3 \"slow\" [fast] killed") || !strings.Contains(out, "working") {
		t.Fatalf("kill: %s", out)
	}
}

func TestBadInputAndVibeOff(t *testing.T) {
	r := newRun(t, true)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"vibe_spawn", map[string]any{"brief": " ", "label": "x"}, "brief is empty"},
		{"vibe_spawn", map[string]any{"brief": "x", "label": "x", "tier": "turbo"}, "must be one of"},
		{"vibe_spawn", map[string]any{"brief": "x", "label": "x", "isolation": "worktree"}, "git repository"},
		{"vibe_kill", map[string]any{"worker_id": "w9"}, "no workers yet"},
		{"vibe_wait", map[string]any{"worker_ids": []string{"w5"}}, "no worker"},
	} {
		out, _, isErr := call(t, r, c.tool, c.args)
		if !isErr || !strings.Contains(out, c.want) {
			t.Errorf("%s %v: %v %s", c.tool, c.args, isErr, out)
		}
	}
	off := newRun(t, false)
	out, _, isErr := call(t, off, "vibe_spawn", map[string]any{"brief": "x", "label": "x"})
	if !isErr || !strings.Contains(out, "vibe_spawn") {
		t.Fatalf("vibe off: %v %s", isErr, out)
	}
	bad, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: map[string]string{"fast": "no-such-agent-cli -p"}, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	out, _, isErr = call(t, bad, "vibe_spawn", map[string]any{"brief": "x", "label": "x"})
	if !isErr || !strings.Contains(out, "no-such-agent-cli") {
		t.Fatalf("a missing worker program: %s", out)
	}
}

// Closing the run stops a running worker and every process it started.
func TestRunCloseStopsWorkers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	t.Setenv("VIBE_TEST_CHILD_PID", pidFile)
	r := newRun(t, true)
	call(t, r, "vibe_spawn", map[string]any{"brief": "child", "label": "long"})
	pid := testenv.PidFile(t, pidFile)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !testenv.Gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the worker's child %d outlived the run", pid)
	}
}

// Issue 19 §4: every vibe_* result names what it is about in the field the
// other tools use, "operation" (it was "op").
func TestResultSaysOperation(t *testing.T) {
	for _, d := range vibetool.Family.Descriptors() {
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(d.OutputSchema(), &schema); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if _, ok := schema.Properties["operation"]; !ok {
			t.Errorf("%s: the output schema has no operation: %v", d.Name, schema.Properties)
		}
		if _, ok := schema.Properties["op"]; ok {
			t.Errorf("%s: the output schema still has op", d.Name)
		}
	}
}
