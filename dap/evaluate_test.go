package dap

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// L7: evaluate had no time bound: __import__('time').sleep(30) held the
// serial debug tool for 30 s. It is bounded like a resume; past the bound
// pause is sent and the result says the expression still runs, and the
// next evaluate says so at once instead of queueing behind it.
func TestEvaluateTimeBound(t *testing.T) {
	needAdapter(t, "debugpy")
	root := testenv.Tree(t, map[string]string{"requirements.txt": "", "app.py": pyProgram})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res := stopAt(t, s, ctx, root, "app.py", 4, adapter.LaunchSpec{Program: at(root, filepath.Join(root, "app.py"))}, 0)
	wantStop(t, res, "breakpoint", 4, "s += x")
	t0 := time.Now()
	ev, err := s.Evaluate(ctx, "__import__('time').sleep(30)", "", 2*time.Second)
	if d := time.Since(t0); d > 20*time.Second {
		t.Fatalf("an evaluate bounded at 2 s took %s", d)
	}
	if err != nil || !ev.TimedOut || !strings.Contains(ev.Note, "did not finish within 2s") || !strings.Contains(ev.Note, "pause was sent") {
		t.Fatalf("a slow evaluate: %+v %v", ev, err)
	}
	if _, err := s.Evaluate(ctx, "1 + 1", "", 0); err == nil || !strings.Contains(err.Error(), "still runs inside the program") {
		t.Fatalf("an evaluate behind a running one: %v", err)
	}
	// The stack is still read, and terminate ends it all.
	if _, err := s.Stack(ctx, 0); err != nil {
		t.Fatalf("stack while the evaluate runs: %v", err)
	}
	prog := s.sess.PID()
	if _, err := s.Terminate(ctx, false); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "the program", prog)
}
