package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"golang.org/x/sys/unix"
)

// D4: a folder swapped for a symlink out of the root between the check and
// the use must never let a tool read or write outside. The swap is atomic
// (renameat2 RENAME_EXCHANGE of root/sub and root/sublink, a link to
// ../outside/dir), as fast as the kernel allows, for the whole test.

const secret = "OUTSIDE SECRET\n"

func swapLoop(t *testing.T, h *harness) (stop func()) {
	t.Helper()
	out := filepath.Join(h.outside(), "dir")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "a.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	h.put("sub/a.txt", "inside\n")
	if err := os.Symlink("../outside/dir", h.abs("sublink")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, h.abs("sub"), unix.AT_FDCWD, h.abs("sublink"), unix.RENAME_EXCHANGE); err != nil {
		testenv.Unavailable(t, "renameat2 RENAME_EXCHANGE", err)
	}
	unix.Renameat2(unix.AT_FDCWD, h.abs("sub"), unix.AT_FDCWD, h.abs("sublink"), unix.RENAME_EXCHANGE)
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			unix.Renameat2(unix.AT_FDCWD, h.abs("sub"), unix.AT_FDCWD, h.abs("sublink"), unix.RENAME_EXCHANGE)
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}

// raceTools are the tools each race calls while swapLoop swaps sub.
var raceTools = []string{"read", "write", "edit", "apply_patch"}

// raceArgs is the arguments of tool's i-th call in a race: read and edit
// take sub/a.txt, write puts content in writeTo, apply_patch creates
// sub/p<i>.txt holding content.
func raceArgs(tool string, i int, writeTo, content string) map[string]any {
	switch tool {
	case "read":
		return map[string]any{"path": "sub/a.txt"}
	case "write":
		return map[string]any{"path": writeTo, "content": content}
	case "edit":
		return map[string]any{"path": "sub/a.txt", "old_string": "\n", "new_string": "!\n"}
	}
	return map[string]any{"patch": fmt.Sprintf("--- /dev/null\n+++ b/sub/p%d.txt\n@@ -0,0 +1 @@\n+%s", i, content)}
}

func TestSwappedFolderNeverLeadsOutside(t *testing.T) {
	const n = 300
	for _, tool := range raceTools {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t)
			stop := swapLoop(t, h)
			outsideBefore := testenv.Snapshot(t, filepath.Join(filepath.Dir(h.root), "outside"))
			leaks := 0
			for i := 0; i < n; i++ {
				res := h.call(tool, raceArgs(tool, i, fmt.Sprintf("sub/w%d.txt", i), "PWNED\n"))
				if strings.Contains(fmt.Sprint(res.Content), "OUTSIDE SECRET") {
					leaks++
				}
			}
			stop()
			if leaks > 0 {
				t.Errorf("%d of %d %s results showed the outside file", leaks, n, tool)
			}
			if d := testenv.SnapshotDiff(outsideBefore, testenv.Snapshot(t, filepath.Join(filepath.Dir(h.root), "outside"))); d != "" {
				t.Errorf("%s changed the folder outside the root: %s", tool, d)
			}
			if left := tempLeftovers(t, filepath.Dir(h.root)); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

// N9: refusals under these races read raw ("readlink …: invalid
// argument", "statat sub/a.txt: path escapes from parent", "not a regular
// file (L---------)") and named where the outside link points ("resolves
// to /tmp/…/outside/dir/a.txt"). Each is now one of two sentences, naming
// only the path given: the path changed while it was opened, or it leads
// outside the root.
func TestRaceRefusalsReadPlainly(t *testing.T) {
	const n = 300
	for _, tool := range raceTools {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t)
			stop := swapLoop(t, h)
			defer stop()
			outside := filepath.Join(filepath.Dir(h.root), "outside")
			seen := map[string]int{}
			for i := 0; i < n; i++ {
				msg := h.callQuiet(tool, raceArgs(tool, i, "sub/w.txt", "x\n"))
				if msg == "" {
					continue
				}
				bad := strings.Contains(msg, outside)
				for _, raw := range []string{"readlink", "lstat", "statat", "openat", "escapes from parent", "invalid argument", "L---------", "not a directory"} {
					bad = bad || strings.Contains(msg, raw)
				}
				if !strings.Contains(msg, "the path changed while it was opened (a link or folder was replaced); try again") &&
					!strings.Contains(msg, "leads outside the root") {
					bad = true
				}
				if os.Getenv("N9_SHOW") != "" {
					t.Log(msg)
				}
				if bad {
					seen[msg]++
				}
			}
			for msg, k := range seen {
				t.Errorf("%d× %s", k, msg)
			}
		})
	}
}
