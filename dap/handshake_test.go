package dap

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// The handshake orderings adapters use, on the scripted adapter: delve
// answers launch and then sends initialized; debugpy sends initialized and
// answers launch only after configurationDone; others send initialized
// right after the initialize response, before launch is even sent. Each
// stops at the breakpoint with its locals, continues, and reports the exit
// with its last output.
func TestHandshakeOrderings(t *testing.T) {
	for _, name := range []string{"delve", "debugpy", "early"} {
		t.Run(name, func(t *testing.T) {
			s, root := fakeProcess(t, name)
			ctx := testCtx(t)
			s.SetBreakpoints(ctx, at(root, fakeSource), []breakpoint.LineSpec{{Line: 3}}, nil, false)
			res, err := s.Launch(ctx, fakeLaunch(root), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			wantStop(t, res, "breakpoint", 3, "return n;")
			wantLocal(t, res.Locals, "n", "3")
			if len(res.Stop.Breakpoints) != 1 || res.Stop.Breakpoints[0] != "b1" {
				t.Fatalf("breakpoints hit %v", res.Stop.Breakpoints)
			}
			for i := 0; ; i++ {
				res, err = s.Resume(ctx, "continue", 0, 20*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != "stopped" || i > 3 {
					break
				}
			}
			if res.Outcome != "exited" || res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(res.Output, "last words") {
				t.Fatalf("the end: %+v", res)
			}
		})
	}
}

// lldb-dap sends one stopped event per thread: each burst is one stop,
// focused on the thread at the breakpoint, and continue goes on to the
// next burst, not to the rest of this one.
func TestHandshakeThreadBurst(t *testing.T) {
	s, root := fakeProcess(t, "lldb-burst")
	ctx := testCtx(t)
	res, err := s.Launch(ctx, fakeLaunch(root), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.N != 1 || res.Stop.Reason != "breakpoint" || res.Stop.ThreadID != 4 {
		t.Fatalf("the first burst: %+v %+v", res, res.Stop)
	}
	res, err = s.Resume(ctx, "continue", 0, 20*time.Second)
	if err != nil || res.Outcome != "stopped" || res.Stop.N != 2 || res.Stop.ThreadID != 4 {
		t.Fatalf("the second burst: %+v %v", res, err)
	}
	res, err = s.Resume(ctx, "continue", 0, 20*time.Second)
	if err != nil || res.Outcome != "exited" {
		t.Fatalf("the end: %+v %v", res, err)
	}
}

// An adapter that dies in the middle of a request: the call returns at
// once with what the adapter said, the session is over, and a new launch
// works.
func TestHandshakeAdapterDiesMidRequest(t *testing.T) {
	s, root := fakeProcess(t, "dies")
	ctx := testCtx(t)
	prog := filepath.Join(root, fakeSource)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Adapter: "fake", Program: at(root, prog)}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := s.Evaluate(ctx, "n", "", 0)
	if err == nil || !strings.Contains(err.Error(), "assertion failed in evaluate") {
		t.Fatalf("evaluate on an adapter that dies: %v", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Fatalf("the failed evaluate took %s", d)
	}
	if st := s.Status(); st.Session != nil || !strings.Contains(st.Previous, "exited unexpectedly") {
		t.Fatalf("status after the adapter died: %+v", st)
	}
	if res, err := s.Launch(ctx, adapter.LaunchSpec{Adapter: "fake", Program: at(root, prog)}, 20*time.Second); err != nil || res.Outcome != "stopped" {
		t.Fatalf("a launch after: %+v %v", res, err)
	}
}

// An adapter whose last events come right before it exits: none is lost
// (the exit code and the last output are in the result), round after
// round. Reading the adapter's output while os/exec's Wait closed the pipe
// lost them.
func TestHandshakeLastEventBeforeExit(t *testing.T) {
	s, root := fakeProcess(t, "last-words")
	ctx := testCtx(t)
	lost := 0
	const rounds = 20
	for i := 0; i < rounds; i++ {
		res, err := s.Launch(ctx, fakeLaunch(root), 20*time.Second)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if res.Outcome != "exited" || res.ExitCode == nil || *res.ExitCode != 7 || !strings.Contains(res.Output, "last words") {
			lost++
			tail := res.Output[max(len(res.Output)-20, 0):]
			code := -1
			if res.ExitCode != nil {
				code = *res.ExitCode
			}
			t.Logf("round %d: %s, exit code %d, output ending %q (%d more), ended %q", i, res.Outcome, code, tail, res.OutputMore, res.Ended)
		}
		s.Terminate(ctx, false)
	}
	if lost > 0 {
		t.Fatalf("%d of %d rounds lost the adapter's last events", lost, rounds)
	}
}

// A run closed while an adapter starts: Close saw no session to end, so
// the launch ends the one it made instead of storing it (its adapter would
// have run until the time limit).
func TestLaunchDuringClose(t *testing.T) {
	bubble(t, func(t *testing.T) {
		hold := make(chan struct{})
		h := fakeHere(t, "delve", hold)
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{})
		errc := make(chan error, 1)
		go func() {
			_, err := s.Launch(t.Context(), fakeLaunch(root), 20*time.Second)
			errc <- err
		}()
		synctest.Wait() // the adapter runs, and initialize waits for its answer
		s.Close()
		close(hold)
		if err := <-errc; err == nil || !errors.Is(err, lifetime.ErrClosed) {
			t.Fatalf("a launch during Close: %v", err)
		}
		synctest.Wait()
		if n := h.live.Load(); n != 0 {
			t.Fatalf("the adapter outlived the closed run (%d still served)", n)
		}
	})
}

// A continue that waits is reached by pause (the registry lets pause past
// the tool's queue): it returns with the pause's stop, at once; a pause of
// a stopped program answers at once.
func TestPauseReachesAWaitingContinue(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, res := launchHere(t, "forever", Config{}, time.Second)
		if res.Outcome != "running" {
			t.Fatalf("launch of a program that never stops: %+v", res)
		}
		ctx := t.Context()
		got := make(chan *result.StopResult, 1)
		go func() {
			r, err := s.Resume(ctx, "continue", 0, time.Minute)
			if err != nil {
				t.Error(err)
			}
			got <- r
		}()
		synctest.Wait() // the continue waits for a stop
		t0 := time.Now()
		p, err := s.Resume(ctx, "pause", 0, 10*time.Second)
		if err != nil || p.Outcome != "stopped" || p.Stop.Reason != "pause" {
			t.Fatalf("pause: %+v %v", p, err)
		}
		synctest.Wait()
		select {
		case c := <-got:
			if c == nil || c.Outcome != "stopped" || c.Stop.N != p.Stop.N {
				t.Fatalf("the waiting continue saw %+v", c)
			}
		default:
			t.Fatal("the waiting continue did not return after pause")
		}
		again, err := s.Resume(ctx, "pause", 0, time.Second)
		if err != nil || again.Stop == nil || again.Stop.N != p.Stop.N || !strings.Contains(again.Note, "already stopped") {
			t.Fatalf("pause while stopped: %+v %v", again, err)
		}
		if d := time.Since(t0); d != 0 {
			t.Fatalf("pause and the continue it reached waited %s", d)
		}
	})
}
