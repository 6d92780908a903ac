package debugtool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R11: set_variable had no time bound, and status queued behind it: a
// value that sleeps held the serial debug tool, and `debug status` got no
// answer. Status now answers while set_variable runs (here: before it
// returns), and set_variable returns at its timeout_seconds, saying the
// value still runs.
func TestStatusWhileSetVariableRuns(t *testing.T) {
	testenv.LookPath(t, "python3")
	r, root := debugRun(t, map[string]string{"requirements.txt": "", "app.py": "s = 0\nfor x in [1, 2, 3]:\n    s += x\nprint(s)\n"}, dap.Config{})
	dbg(t, r, "breakpoints", map[string]any{"file": "app.py", "lines": []int{3}})
	if text, isErr, _ := dbg(t, r, "launch", map[string]any{"program": "app.py", "timeout_seconds": 60}); isErr {
		t.Fatal(text)
	}
	marker := filepath.Join(root, "started")
	type answer struct {
		text  string
		isErr bool
	}
	set := make(chan answer, 1)
	go func() {
		text, isErr, _ := dbg(t, r, "set_variable", map[string]any{"name": "s",
			"value": "open('started', 'w').close() or __import__('time').sleep(20) or 5", "timeout_seconds": 10})
		set <- answer{text, isErr}
	}()
	// The marker is the program's (a real process): polled, not on
	// synctest's clock.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the value never started running")
		}
	}
	text, isErr, _ := dbg(t, r, "status", nil)
	select {
	case a := <-set:
		t.Fatalf("status answered only once set_variable had (%q): %s", a.text, text)
	default:
	}
	if isErr || !strings.Contains(text, "stopped (stop 1)") {
		t.Fatalf("status while set_variable runs: %s", text)
	}
	a := <-set
	if a.isErr || !strings.Contains(a.text, "Setting s did not finish within 10s; pause was sent") {
		t.Fatalf("set_variable of a value that sleeps 20 s, bounded at 10: %s", a.text)
	}
	text, isErr, _ = dbg(t, r, "evaluate", map[string]any{"expression": "s"})
	if !isErr || !strings.Contains(text, "an earlier set_variable (s = open('started'") {
		t.Fatalf("evaluate behind it: %s", text)
	}
	dbg(t, r, "terminate", nil)
}
