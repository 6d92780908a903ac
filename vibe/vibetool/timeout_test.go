package vibetool_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// Issue 19 §2 guard: every timeout of the vibe tools, set small, ends its
// call: vibe_wait's timeout_seconds (by id, with no ids, mode all), a
// spawn's timeout_seconds, and the run's default worker time limit
// (vibetool.Config.Timeout). The workers are real processes; each answer
// says which limit ended the call (the workers would sleep 30 s, the
// waits' own default is longer), so nothing here is measured. The roster's
// clocks themselves are tested on a synctest clock in vibe/queue_test.go.
func TestTimeoutsBound(t *testing.T) {
	script, _ := filepath.Abs("../testdata/worker.sh")
	r, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), Without: []string{"lsp", "code_graph"},
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: map[string]string{"fast": script}, StateDir: t.TempDir(), Timeout: time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := func(out, s string) {
		t.Helper()
		if !strings.Contains(out, s) {
			t.Errorf("want %q in:\n%s", s, out)
		}
	}
	var out string
	call(t, r, "vibe_spawn", map[string]any{"brief": "sleep 30", "label": "slow", "timeout_seconds": 60})
	out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_id": "w1", "timeout_seconds": 1})
	want(out, "waited 1s: still running or queued: w1")
	out, _, _ = call(t, r, "vibe_wait", map[string]any{"timeout_seconds": 1})
	want(out, "waited 1s: still running or queued: w1")
	call(t, r, "vibe_spawn", map[string]any{"brief": "quick", "label": "quick"})
	out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_ids": []string{"w1", "w2"}, "mode": "all", "timeout_seconds": 1})
	want(out, "waited 1s: still running or queued: w1")
	want(out, "done (w2 quick fast): quick")

	for _, c := range []struct {
		what string
		args map[string]any
	}{
		{"a spawn's timeout_seconds", map[string]any{"brief": "sleep 30", "label": "limited", "timeout_seconds": 1}},
		{"the run's worker time limit", map[string]any{"brief": "sleep 30", "label": "default"}},
	} {
		_, sc, isErr := call(t, r, "vibe_spawn", c.args)
		if isErr {
			t.Fatalf("%s: spawn: %v", c.what, sc)
		}
		id := sc["worker"].(map[string]any)["id"].(string)
		out, _, _ = call(t, r, "vibe_wait", map[string]any{"worker_id": id})
		want(out, "timed_out")
		want(out, "the time limit (1s) ran out")
	}
}
