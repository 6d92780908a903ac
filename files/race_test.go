package files_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// D1: parallel read-modify-write calls to one file must not lose updates.
// Before per-file serialization, 100 parallel edits reported 100 successes
// and left about half of them on disk.

func TestParallelEditsAllLand(t *testing.T) {
	h := newHarness(t)
	const n = 100
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "line%d\n", i)
	}
	h.put("f.txt", b.String())
	allLand(t, h, n, "edit", func(i int) (map[string]any, string) {
		return map[string]any{"path": "f.txt", "old_string": fmt.Sprintf("line%d\n", i), "new_string": fmt.Sprintf("EDITED%d\n", i)},
			fmt.Sprintf("EDITED%d\n", i)
	})
}

func TestParallelPatchesAllLand(t *testing.T) {
	h := newHarness(t)
	const n = 100
	// Each patch changes line 3i+2 with the untouched lines 3i+1 and 3i+3 as
	// context, so no two patches overlap.
	var b strings.Builder
	for i := 0; i < 3*n; i++ {
		fmt.Fprintf(&b, "l%d\n", i+1)
	}
	h.put("f.txt", b.String())
	allLand(t, h, n, "apply_patch", func(i int) (map[string]any, string) {
		at := 3*i + 1
		patch := fmt.Sprintf("--- a/f.txt\n+++ b/f.txt\n@@ -%d,3 +%d,3 @@\n l%d\n-l%d\n+P%d\n l%d\n", at, at, at, at+1, at+1, at+2)
		return map[string]any{"patch": patch}, fmt.Sprintf("\nP%d\n", at+1)
	})
}

// allLand makes n calls of tool at once, the i-th with the arguments call
// gives, and checks that each succeeded and left in f.txt the text call
// gives with them.
func allLand(t *testing.T, h *harness, n int, tool string, call func(i int) (args map[string]any, landed string)) {
	t.Helper()
	var wg sync.WaitGroup
	fails := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args, _ := call(i)
			if res := h.callQuiet(tool, args); res != "" {
				fails <- res
			}
		}()
	}
	wg.Wait()
	close(fails)
	for f := range fails {
		t.Errorf("%s failed: %s", tool, f)
	}
	got := h.get("f.txt")
	lost := 0
	for i := 0; i < n; i++ {
		if _, landed := call(i); !strings.Contains(got, landed) {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d parallel calls of %s reported success but are not in the file", lost, n, tool)
	}
}
