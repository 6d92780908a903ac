package dap

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const cWatch = `#include <stdio.h>

int main(void) {
	int hits = 0;
	int other = 0;
	for (int i = 0; i < 10; i++) {
		other += i;
		if (i == 6) {
			hits = i * 7;
		}
	}
	printf("hits %d other %d\n", hits, other);
	return 0;
}
`

// A watchpoint on lldb-dap: set at a stop on a local, the program stops
// where it is written, with the new value; removed, the program runs to
// its end. debugpy has none, and says so.
func TestWatchpoints(t *testing.T) {
	t.Run("lldb", func(t *testing.T) {
		s, ctx, root := stoppedSample(t, "lldb", "main.c", cWatch, 6)
		if spec, _ := adapter.Lookup("lldb"); s.sess.caps.SupportsDataBreakpoints != spec.DataBreakpoints {
			t.Fatalf("the adapters table says data breakpoints %v; lldb-dap says %v", spec.DataBreakpoints, s.sess.caps.SupportsDataBreakpoints)
		}
		s.SetBreakpoints(ctx, at(root, "main.c"), nil, nil, true)
		refusedWhereTheyDoNotFire(t, s, ctx, "hits")
		w, err := s.Watch(ctx, "", "hits", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Watchpoints) != 1 || !w.Watchpoints[0].Verified || w.Watchpoints[0].ID != "w1" {
			t.Fatalf("watch: %+v", w.Watchpoints)
		}
		res, err := s.Resume(ctx, "continue", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// lldb-dap says "breakpoint", described as "watchpoint 1".
		if res.Outcome != "stopped" || (res.Stop.Reason != "data breakpoint" && !strings.HasPrefix(res.Stop.Description, "watchpoint")) || res.Frame == nil || res.Frame.File != "main.c" {
			t.Fatalf("the write (stopped just after it): %+v %+v %+v", res, res.Stop, res.Frame)
		}
		// It stops on the instruction after the write (here line 6's i++).
		if v, i := localNamed(res.Locals, "hits"), localNamed(res.Locals, "i"); v == nil || v.Value != "42" || i == nil || i.Value != "6" {
			t.Fatalf("locals at the write %+v", res.Locals)
		}
		if _, err := s.Watch(ctx, "", "hits", "", true); err != nil {
			t.Fatal(err)
		}
		done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
		if err != nil || done.Outcome != "exited" {
			t.Fatalf("after removing it: %+v %v", done, err)
		}
		if _, err := s.Watch(ctx, "", "hits", "sometimes", false); err == nil || !strings.Contains(err.Error(), "use write, read or readWrite") {
			t.Fatalf("a bad access: %v", err)
		}
	})
	t.Run("delve", func(t *testing.T) {
		root := goRoot(t, goProgram, nil)
		s := newSupervisor(t, root, Config{})
		ctx := testCtx(t)
		stopAt(t, s, ctx, root, "main.go", 7, adapter.LaunchSpec{Program: at(root, root)}, 60*time.Second)
		s.SetBreakpoints(ctx, at(root, "main.go"), nil, nil, true)
		refusedWhereTheyDoNotFire(t, s, ctx, "sum")
		w, err := s.Watch(ctx, "", "sum", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Watchpoints) != 1 || !w.Watchpoints[0].Verified {
			t.Fatalf("watch: %+v", w.Watchpoints)
		}
		res, err := s.Resume(ctx, "continue", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != "stopped" || res.Frame == nil || res.Frame.File != "main.go" {
			t.Fatalf("the write: %+v %+v %+v", res, res.Stop, res.Frame)
		}
		if v := localNamed(res.Locals, "sum"); v == nil || v.Value != "1" {
			t.Fatalf("locals at the write %+v (stop %+v)", res.Locals, res.Stop)
		}
	})
	t.Run("debugpy", func(t *testing.T) {
		needAdapter(t, "debugpy")
		root := testenv.Tree(t, map[string]string{"app.py": pyProgram})
		s := newSupervisor(t, root, Config{})
		ctx := testCtx(t)
		stopAt(t, s, ctx, root, "app.py", 4, adapter.LaunchSpec{Program: at(root, "app.py")}, 30*time.Second)
		if spec, _ := adapter.Lookup("debugpy"); s.sess.caps.SupportsDataBreakpoints != spec.DataBreakpoints {
			t.Fatalf("the adapters table says data breakpoints %v; debugpy says %v", spec.DataBreakpoints, s.sess.caps.SupportsDataBreakpoints)
		}
		if _, err := s.Watch(ctx, "", "s", "", false); err == nil || !strings.Contains(err.Error(), "debugpy has no data breakpoints") {
			t.Fatalf("watch on debugpy: %v", err)
		}
	})
}

// refusedWhereTheyDoNotFire checks, on a machine whose hardware
// watchpoints never fire (a virtual machine that keeps the debug
// registers), that watch says so instead of setting a watchpoint the
// program runs past; the rest of the test then needs other hardware.
func refusedWhereTheyDoNotFire(t *testing.T, s *Supervisor, ctx context.Context, name string) {
	t.Helper()
	fires, why := adapter.HardwareWatchpoints()
	if fires {
		return
	}
	_, err := s.Watch(ctx, "", name, "", false)
	if err == nil || !strings.Contains(err.Error(), "would never stop the program") || !strings.Contains(err.Error(), "do not fire") {
		t.Fatalf("watch where hardware watchpoints do not fire: %v", err)
	}
	if st := adapter.Statuses(ctx, s.g); !slices.ContainsFunc(st, func(a adapter.Status) bool {
		return a.ID == s.sess.Spec.ID && !a.Watchpoints && a.WatchpointsNote == why
	}) {
		t.Fatalf("adapters does not say watch does not work here: %+v", st)
	}
	t.Skipf("watch is refused as it should be here; stopping at a write needs a machine whose watchpoints fire: %s", why)
}

// R17: on delve, a line breakpoint's stop was labelled "data breakpoint
// b1" once a watchpoint existed: delve's label (a debug status bit from an
// earlier hit read for this stop), and b1 matched by where it stopped. A
// data breakpoint's stop names the watchpoint whose memory changed and
// counts no line breakpoint; one where no watched value changed, at a
// breakpoint, is that breakpoint's stop. (This machine's hardware
// watchpoints do not fire under delve, so the scripted adapter plays
// delve's events: its stops are all at prog.c:3.)
func TestDataBreakpointLabel(t *testing.T) {
	s, root := fakeProcess(t, "watch")
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, fakeSource), []breakpoint.LineSpec{{Line: 3}}, nil, false)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Adapter: "fake", Program: at(root, fakeSource)}, 20*time.Second)
	if err != nil || res.Stop == nil || strings.Join(res.Stop.Breakpoints, ",") != "b1" {
		t.Fatalf("launch: %+v %v", res, err)
	}
	if w, err := s.Watch(ctx, "", "n", "", false); err != nil || len(w.Watchpoints) != 1 {
		t.Fatalf("watch: %+v %v", w, err)
	}
	res, err = s.Resume(ctx, "continue", 0, 0)
	if err != nil || res.Stop == nil || res.Stop.Reason != "data breakpoint" || strings.Join(res.Stop.Breakpoints, ",") != "w1" {
		t.Fatalf("the write: want data breakpoint w1, got %+v %v", res.Stop, err)
	}
	res, err = s.Resume(ctx, "continue", 0, 0)
	if err != nil || res.Stop == nil || res.Stop.Reason != "breakpoint" || strings.Join(res.Stop.Breakpoints, ",") != "b1" || !strings.Contains(res.Note, "no watched value changed") {
		t.Fatalf("a breakpoint's stop delve labels a data breakpoint: want breakpoint b1, got %+v (%q) %v", res.Stop, res.Note, err)
	}
	if st := s.Status(); len(st.Breakpoints) != 1 || st.Breakpoints[0].Hits != 2 {
		t.Fatalf("b1's hits (the launch's stop and the last): %+v", st.Breakpoints)
	}
}
