package debugtool_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const crashC = `#include <stdlib.h>

static int checked(int *xs, int n) {
	if (xs[n - 1] != n) {
		abort();
	}
	return n;
}

int main(void) {
	int xs[3] = {1, 2, 4};
	return checked(xs, 3);
}
`

// A crash opened as an agent would: launch with core shows where it
// crashed (the line quoted, the locals), its threads and stack; stack,
// variables and evaluate read it; continue is refused as read-only.
func TestCoreThroughTheTool(t *testing.T) {
	testenv.LookPath(t, "lldb-dap-19")
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if p := strings.TrimSpace(string(pattern)); p == "" || strings.HasPrefix(p, "|") || strings.Contains(p, "/") {
		testenv.Unavailable(t, "a core file", fmt.Errorf("the machine's core_pattern (%q) does not write a core in the program's folder", p))
	}
	r, root := debugRun(t, map[string]string{"crash.c": crashC, "Makefile": "crash: crash.c\n"}, dap.Config{})
	testenv.BuildC(t, root, "crash.c", "crash")
	crash := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./crash")
	crash.Dir = root
	if err := crash.Run(); err == nil {
		t.Fatal("the program did not crash")
	}
	if _, err := os.Stat(filepath.Join(root, "core")); err != nil {
		testenv.Unavailable(t, "a core file", fmt.Errorf("the crash wrote no core (%v); the hard core limit may be 0", err))
	}

	text, isErr, _ := dbg(t, r, "launch", map[string]any{"program": "crash", "core": "crash.c"})
	if !isErr || !strings.Contains(text, "core crash.c is not a core file") {
		t.Fatalf("a source file as core: %s", text)
	}
	text, isErr, res := dbg(t, r, "launch", map[string]any{"program": "crash", "core": "core"})
	if isErr {
		t.Fatal(text)
	}
	for _, want := range []string{"Core file core (read-only", "Crashed at crash.c:5 in checked (crash: signal SIGABRT", "→     5 │ \t\tabort();", "n = 3", "Threads (1):", "Stack of the crashing thread (2 frames above the first in the checkout left out", "crash.c:12 in main"} {
		if !strings.Contains(text, want) {
			t.Errorf("the core's result lacks %q:\n%s", want, text)
		}
	}
	frame := res.Stop.Frame.ID
	text, isErr, _ = dbg(t, r, "evaluate", map[string]any{"expression": "xs[n - 1]", "frame_id": frame})
	if isErr || !strings.Contains(text, "4") {
		t.Fatalf("evaluate on the core: %s", text)
	}
	// Without frame_id: the frame the result showed, not libc's raise at
	// the top (issue 26).
	text, isErr, _ = dbg(t, r, "evaluate", map[string]any{"expression": "xs[n - 1]"})
	if isErr || !strings.Contains(text, "xs[n - 1] = 4") || !strings.Contains(text, "Evaluated in checked (crash.c:5), the frame the stop showed") {
		t.Fatalf("evaluate on the core without frame_id: %s", text)
	}
	text, isErr, _ = dbg(t, r, "stack", nil)
	if isErr || !strings.Contains(text, "crash.c:12 in main") {
		t.Fatalf("stack on the core: %s", text)
	}
	text, isErr, _ = dbg(t, r, "continue", nil)
	if !isErr || !strings.Contains(text, "a core file is read-only") {
		t.Fatalf("continue on the core: %s", text)
	}
	text, isErr, _ = dbg(t, r, "terminate", nil)
	if isErr || !strings.Contains(text, "Closed crash (core core): the adapter is gone; no program ran, and the core file is unchanged.") {
		t.Fatalf("terminate of the core session: %s", text)
	}
}
