package dap

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
)

// Issue 19 §2: every configurable wait of debug bounds its call. Each is
// tried on the scripted adapter that never answers (or a program that
// never stops), served in this process and run on testing/synctest's
// clock, so the waits are the real defaults (10 s, 2 minutes, 30 minutes)
// and take no time. A call must wait out its bound and return within twice
// it.

// within fails t unless the call that began at t0 returned after d and
// within twice d.
func within(t *testing.T, what string, t0 time.Time, d time.Duration) {
	t.Helper()
	if took := time.Since(t0); took < d || took > 2*d {
		t.Errorf("%s bounded at %s took %s", what, d, took)
	}
}

// launchBounded wants launch l on s refused with an error holding want once
// bound has passed, and not much later; what names the case.
func launchBounded(t *testing.T, ctx context.Context, s *Supervisor, l adapter.LaunchSpec, bound time.Duration, what, want string) {
	t.Helper()
	t0 := time.Now()
	_, err := s.Launch(ctx, l, 0)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v", what, err)
	}
	within(t, what, t0, bound)
}

func fakeLaunch(root string) adapter.LaunchSpec {
	return adapter.LaunchSpec{Adapter: "fake", Program: at(root, filepath.Join(root, fakeSource))}
}

// The resume wait (Config.ResumeWait, 10 s by default) bounds a launch and
// a continue that give no wait; a resume's own wait (timeout_seconds)
// bounds it too.
func TestResumeWaitBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		wait time.Duration
	}{
		{"the default", Config{}, 10 * time.Second},
		{"configured", Config{ResumeWait: time.Minute}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				t0 := time.Now()
				s, res := launchHere(t, "forever", c.cfg, 0)
				if res.Outcome != "running" {
					t.Fatalf("launch of a program that never stops: %+v", res)
				}
				within(t, "a launch's wait for its first stop (the resume wait)", t0, c.wait)
				t0 = time.Now()
				res, err := s.Resume(t.Context(), "continue", 0, 0)
				if err != nil || res.Outcome != "running" {
					t.Fatalf("continue: %+v %v", res, err)
				}
				within(t, "a continue (the resume wait)", t0, c.wait)
				t0 = time.Now()
				if res, err = s.Resume(t.Context(), "continue", 0, 5*time.Minute); err != nil || res.Outcome != "running" || !strings.Contains(res.Note, "still running after 5m0s") {
					t.Fatalf("continue with its own wait: %+v %v", res, err)
				}
				within(t, "a continue's own wait (timeout_seconds)", t0, 5*time.Minute)
			})
		})
	}
}

// An evaluate the adapter never answers returns within twice its wait:
// its own (timeout_seconds), or the resume wait when it gives none. Past
// the wait pause is sent and given at most the wait again; the result
// says the expression still runs, and the next evaluate says so at once.
func TestEvaluateWaitBounds(t *testing.T) {
	for _, c := range []struct {
		name      string
		wait, was time.Duration
	}{
		{"its own wait", 300 * time.Millisecond, 300 * time.Millisecond},
		{"the resume wait", 0, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				s, _ := launchHere(t, "hang-eval", Config{}, 20*time.Second)
				ctx := t.Context()
				t0 := time.Now()
				ev, err := s.Evaluate(ctx, "spin()", "", c.wait)
				if err != nil || !ev.TimedOut || !strings.Contains(ev.Note, "terminate ends the session") {
					t.Fatalf("an evaluate never answered: %+v %v", ev, err)
				}
				within(t, "an evaluate", t0, c.was)
				if _, err := s.Evaluate(ctx, "n", "", 0); err == nil || !strings.Contains(err.Error(), "an earlier evaluate (spin()) still runs") {
					t.Fatalf("the next evaluate: %v", err)
				}
				if _, err := s.Terminate(ctx, false); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// The session's time limit (Config.TTL, 30 minutes by default) ends a
// session whose call waits: the waiting call returns when it ends, and
// says why.
func TestTimeLimitBoundsAWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		t0 := time.Now()
		s, res := launchHere(t, "forever", Config{}, 0)
		var err error
		for err == nil && res.Outcome == "running" {
			res, err = s.Resume(t.Context(), "continue", 0, 5*time.Minute)
		}
		if err != nil || res.Outcome != "ended" || !strings.Contains(res.Ended, "time limit of 30m0s") {
			t.Fatalf("continues that wait past the time limit: %+v %v", res, err)
		}
		within(t, "waits in a session", t0, DefaultTTL)
	})
}

// The adapter's start (Config.StartTimeout, 20 s by default) bounds each
// way it can hang: a stdio adapter that never answers initialize, one that
// should dial our socket and never does, and a debugpy.listen port that
// accepts and then says nothing. The last two wait on a real process and a
// real socket, which synctest's clock cannot move past: they take their
// bound, set small, in real time.
func TestStartTimeoutBounds(t *testing.T) {
	t.Run("initialize never answered", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			fakeHere(t, "mute", nil)
			root := fakeRoot(t)
			s := newSupervisor(t, root, Config{})
			launchBounded(t, t.Context(), s, fakeLaunch(root), DefaultStartTimeout,
				"a start on an adapter that never answers initialize", "failed to initialize: no answer within 20s")
		})
	})
	const bound = 2 * time.Second
	t.Run("never connects", func(t *testing.T) {
		adapter.Table = append(adapter.Table, adapter.Spec{ID: "silent", Language: "test", Commands: [][]string{{"sleep", "60"}}, Transport: adapter.UnixClient, Adapter: scripted{}})
		t.Cleanup(func() { adapter.Table = adapter.Table[:len(adapter.Table)-1] })
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{StartTimeout: bound})
		launchBounded(t, testCtx(t), s, adapter.LaunchSpec{Adapter: "silent", Program: at(root, fakeSource)}, bound,
			"a start on an adapter that never connects", "did not connect: no connection within 2s")
	})
	t.Run("a port that says nothing", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close() // held open, never answered
			}
		}()
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{StartTimeout: bound})
		launchBounded(t, testCtx(t), s, adapter.LaunchSpec{Attach: true, Port: ln.Addr().(*net.TCPAddr).Port}, bound,
			"an attach to a port that accepts and says nothing", "no answer within 2s")
	})
}

// The launch bound (Config.LaunchTimeout, 2 minutes by default) ends a
// launch the adapter never answers; the teardown does not wait on that
// adapter again.
func TestLaunchTimeoutBounds(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fakeHere(t, "hang-launch", nil)
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{})
		launchBounded(t, t.Context(), s, fakeLaunch(root), 2*time.Minute, "a launch never answered", "did not finish the launch in time")
		if st := s.Status(); st.Session != nil {
			t.Fatalf("left a session: %+v", st.Session)
		}
	})
}
