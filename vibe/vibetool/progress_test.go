package vibetool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
	"github.com/mark3labs/mcp-go/mcp"
)

// Issue 22 §3: vibe_list shows a running worker's last lines of output
// (its error output too) and its last activity.
func TestListShowsRunningWorkersOutput(t *testing.T) {
	r := newRun(t, true)
	call(t, r, "vibe_spawn", map[string]any{"brief": "steps, then sleep 30", "label": "busy"})
	var out string
	var sc map[string]any
	testenv.Until(time.Minute, func() bool {
		out, sc, _ = call(t, r, "vibe_list", map[string]any{})
		return strings.Contains(out, "working")
	})
	w := sc["workers"].([]any)[0].(map[string]any)
	tail, _ := w["tail"].(string)
	if !strings.Contains(out, "running") || !strings.Contains(out, "last activity ") || !strings.Contains(out, "  last output:\n") ||
		!strings.Contains(out, "    step 6 ✓\n") || !strings.Contains(tail, "note 6") || !strings.HasSuffix(tail, "working") || w["last_activity"] == nil {
		t.Fatalf("list: %s\n%v", out, w)
	}
	if n := strings.Count(tail, "\n") + 1; n > 8 {
		t.Fatalf("the tail has %d lines: %q", n, tail)
	}
	// An ended worker shows its result, not a tail.
	call(t, r, "vibe_kill", map[string]any{"worker_id": "w1"})
	_, sc, _ = call(t, r, "vibe_list", map[string]any{})
	if w := sc["workers"].([]any)[0].(map[string]any); w["tail"] != nil || w["status"] != "killed" {
		t.Fatalf("after kill: %v", w)
	}
}

// A vibe_wait that times out says what each worker still running last
// wrote, and while it waits it sends that as progress notifications to a
// caller that gave a progress token.
func TestWaitReportsProgress(t *testing.T) {
	defer vibetool.SetProgressEvery(vibetool.SetProgressEvery(200 * time.Millisecond))
	r := newRun(t, true)
	c := runtest.Client(t, r, tiers.Normal)
	msgs := make(chan string, 100)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" && n.Params.AdditionalFields["progressToken"] == "wait-1" {
			m, _ := n.Params.AdditionalFields["message"].(string)
			select {
			case msgs <- m:
			default:
			}
		}
	})
	call(t, r, "vibe_spawn", map[string]any{"brief": "steps, then sleep 30", "label": "busy"})
	req := mcp.CallToolRequest{}
	req.Params.Name = "vibe_wait"
	req.Params.Arguments = map[string]any{"worker_id": "w1", "timeout_seconds": 2}
	req.Params.Meta = &mcp.Meta{ProgressToken: "wait-1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	text := mcp.GetTextFromContent(res.Content[0])
	if !strings.Contains(text, "waited 2s: still running or queued: w1") || !strings.Contains(text, `w1 "busy" [fast] running`) ||
		!strings.Contains(text, "  last output:\n") || !strings.Contains(text, "step ") {
		t.Fatalf("wait: %s", text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"running":[{`) || !strings.Contains(string(b), `"tail":"`) {
		t.Fatalf("structured: %s", b)
	}
	// The notifications show the output as it came: more than one last line.
	seen := map[string]bool{}
	for deadline := time.After(5 * time.Second); len(seen) < 2; {
		select {
		case m := <-msgs:
			if !strings.HasPrefix(m, "vibe: 0 of 1 workers ended; w1 running, last activity ") {
				t.Fatalf("progress message: %q", m)
			}
			if _, line, ok := strings.Cut(m, " ago: "); ok {
				seen[line] = true
			}
		case <-deadline:
			t.Fatalf("progress notifications showed %v", seen)
		}
	}
}
