package astedit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func stageClose(t *testing.T, st *Stager, root string) *Proposal {
	t.Helper()
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkHeld fails unless the stager's byte count is the sum of its pending
// edits' sizes, within the limits.
func checkHeld(t *testing.T, st *Stager) {
	t.Helper()
	st.mu.Lock()
	defer st.mu.Unlock()
	var sum int64
	for _, p := range st.pending {
		sum += p.size
	}
	if sum != st.held || st.held > st.limits.MaxBytes || len(st.pending) > st.limits.MaxPending {
		t.Fatalf("%d edits pending holding %d bytes (counted %d); limits %d edits, %d bytes", len(st.pending), sum, st.held, st.limits.MaxPending, st.limits.MaxBytes)
	}
}

// D9: twenty unresolved edits used to be held forever (2.3 GB over
// GOROOT). At most 16 stay pending; the oldest are dropped, named in the
// proposal that dropped them, and resolving one says why and what to do.
func TestPendingEditsAreBoundedByCount(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc})
	st := NewStager(newEngine(t))
	for i := 1; i <= 20; i++ {
		p := stageClose(t, st, root)
		checkHeld(t, st)
		if i == 17 {
			if len(p.Evicted) != 1 || p.Evicted[0] != "edit_1 (more than 16 edits were pending)" {
				t.Errorf("edit_17 evicted %q", p.Evicted)
			}
		}
	}
	pending := st.Pending()
	if len(pending) != DefaultMaxPending || pending[0] != "edit_5" || pending[15] != "edit_20" {
		t.Fatalf("pending %v, want edit_5 … edit_20", pending)
	}
	_, err := st.Resolve(context.Background(), "edit_3", true, atomicfile.Options{})
	if !errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), "edit_3 was dropped because more than 16 edits were pending") ||
		!strings.Contains(err.Error(), "run ast_edit again") {
		t.Fatalf("resolving a dropped edit: %v", err)
	}
	if got := readFile(t, root, "a.go"); got != goSrc {
		t.Fatal("resolving a dropped edit wrote the file")
	}
	// The newest survive and can be accepted; the rest are then stale.
	if _, err := st.Resolve(context.Background(), "edit_20", true, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "a.go"); got != goWant {
		t.Fatalf("after accepting edit_20:\n%s", got)
	}
	for _, id := range st.Pending() {
		st.Resolve(context.Background(), id, false, atomicfile.Options{})
	}
	checkHeld(t, st)
	if st.held != 0 {
		t.Fatalf("%d bytes held with nothing pending", st.held)
	}
}

// D9: the bytes pending edits hold are bounded too, and an edit over the
// limit by itself is refused without dropping anything.
func TestPendingEditsAreBoundedByBytes(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 4; i++ {
		files[fmt.Sprintf("f%d.go", i)] = goSrc
	}
	root := testenv.Tree(t, files)
	e := newEngine(t)
	one := stageClose(t, NewStager(e), root).size
	if one < int64(4*2*len(goSrc)) {
		t.Fatalf("an edit of 4 files of %d bytes is counted as %d bytes", len(goSrc), one)
	}
	limit := one*5/2 + 1
	st := NewStagerWithLimits(e, Limits{MaxBytes: limit})
	for i := 1; i <= 6; i++ {
		p := stageClose(t, st, root)
		checkHeld(t, st)
		if want := i > 2; (len(p.Evicted) == 1) != want {
			t.Errorf("edit_%d evicted %q", i, p.Evicted)
		}
	}
	if pending := st.Pending(); len(pending) != 2 || pending[0] != "edit_5" {
		t.Fatalf("pending %v, want edit_5 and edit_6", pending)
	}
	_, err := st.Resolve(context.Background(), "edit_1", false, atomicfile.Options{})
	if want := "edit_1 was dropped because staged edits held more than " + formatBytes(limit); !errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), want) {
		t.Fatalf("resolving a dropped edit: %v, want %q", err, want)
	}

	small := NewStagerWithLimits(e, Limits{MaxBytes: 1 << 10})
	small.Stage(context.Background(), astgrep.Query{Path: at(root, root+"/f0.go"), Pattern: "defer a.Close()", Language: "go"}, "defer mustClose(a)")
	before := small.Pending()
	_, err = small.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if !errors.Is(err, ErrTooLargeToStage) || !strings.Contains(err.Error(), "over the limit of 1 KiB") || !strings.Contains(err.Error(), "narrow path") ||
		!strings.Contains(err.Error(), "4 files") {
		t.Fatalf("edit over the limit by itself: %v", err)
	}
	if after := small.Pending(); len(before) != 1 || len(after) != 1 {
		t.Fatalf("pending %v before the refused edit, %v after; want it kept", before, after)
	}
	checkHeld(t, small)
}
