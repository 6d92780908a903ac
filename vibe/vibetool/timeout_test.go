package vibetool_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// bound is how long a call bounded by d may take here: twice d, and at
// least d and two seconds (a liveness bound on a busy machine, not a
// measure of speed).
func bound(d time.Duration) time.Duration { return max(2*d, d+2*time.Second) }

func timed(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	t0 := time.Now()
	f()
	if took := time.Since(t0); took > bound(d) {
		t.Errorf("%s took %s; its timeout is %s", what, took.Round(time.Millisecond), d)
	}
}

// Issue 19 §2 guard: every timeout of the vibe tools, set small, ends its
// call within twice its length: vibe_wait's timeout_seconds (by id, with no
// ids, mode all), a spawn's timeout_seconds, and the run's default worker
// time limit (vibetool.Config.Timeout).
func TestTimeoutsBound(t *testing.T) {
	script, _ := filepath.Abs("../testdata/worker.sh")
	r, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), Without: []string{"lsp", "code_graph"},
		Vibe: vibetool.Config{On: true, Commands: map[string]string{"fast": script}, StateDir: t.TempDir(), Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const sec = time.Second
	want := func(out, s string) {
		t.Helper()
		if !strings.Contains(out, s) {
			t.Errorf("want %q in:\n%s", s, out)
		}
	}
	var out string
	call(t, r, "vibe_spawn", map[string]any{"brief": "sleep 30", "label": "slow", "timeout_seconds": 60})
	timed(t, sec, "vibe_wait by worker_id", func() {
		out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_id": "w1", "timeout_seconds": 1})
	})
	want(out, "waited 1s: still running or queued: w1")
	timed(t, sec, "vibe_wait with no ids", func() {
		out, _, _ = call(t, r, "vibe_wait", map[string]any{"timeout_seconds": 1})
	})
	want(out, "waited 1s: still running or queued: w1")
	call(t, r, "vibe_spawn", map[string]any{"brief": "quick", "label": "quick"})
	timed(t, sec, "vibe_wait mode all", func() {
		out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_ids": []string{"w1", "w2"}, "mode": "all", "timeout_seconds": 1})
	})
	want(out, "waited 1s: still running or queued: w1")
	want(out, "done (w2 quick fast): quick")

	for _, c := range []struct {
		what string
		args map[string]any
	}{
		{"a spawn's timeout_seconds", map[string]any{"brief": "sleep 30", "label": "limited", "timeout_seconds": 1}},
		{"the run's worker time limit", map[string]any{"brief": "sleep 30", "label": "default"}},
	} {
		timed(t, sec, c.what, func() {
			_, sc, isErr := call(t, r, "vibe_spawn", c.args)
			if isErr {
				t.Fatalf("spawn: %v", sc)
			}
			id := sc["worker"].(map[string]any)["id"].(string)
			out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_id": id})
		})
		want(out, "timed_out")
		want(out, "the time limit (1s) ran out")
	}
}
