package dap

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 19 §2: every configurable wait of debug bounds its call. Each is
// set small on the scripted adapter that never answers (or a program that
// never stops), and the call must return within twice it: a liveness
// bound, not a measure of speed.

const bound = 2 * time.Second

// within fails t unless the call that began at t0 returned within twice d.
func within(t *testing.T, what string, t0 time.Time, d time.Duration) {
	t.Helper()
	if took := time.Since(t0); took > 2*d {
		t.Errorf("%s bounded at %s took %s", what, d, took.Round(time.Millisecond))
	}
}

func fakeLaunch(root string) LaunchSpec {
	return LaunchSpec{Adapter: "fake", Program: at(root, filepath.Join(root, fakeSource))}
}

// The resume wait (Config.ResumeWait) bounds a launch and a continue that
// give no wait; a resume's own wait (timeout_seconds) bounds it too.
func TestResumeWaitBounds(t *testing.T) {
	fakeAdapter(t, "forever")
	root := fakeRoot(t)
	s := newSupervisor(t, root, Config{ResumeWait: bound})
	ctx := testCtx(t)
	t0 := time.Now()
	res, err := s.Launch(ctx, fakeLaunch(root), 0)
	if err != nil || res.Outcome != "running" {
		t.Fatalf("launch of a program that never stops: %+v %v", res, err)
	}
	within(t, "a launch's wait for its first stop (the resume wait)", t0, bound)
	t0 = time.Now()
	if res, err = s.Resume(ctx, "continue", 0, 0); err != nil || res.Outcome != "running" {
		t.Fatalf("continue: %+v %v", res, err)
	}
	within(t, "a continue (the resume wait)", t0, bound)

	s2 := newSupervisor(t, root, Config{}) // the default wait is 10 s
	s.Close()
	if _, err := s2.Launch(ctx, fakeLaunch(root), bound); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if res, err = s2.Resume(ctx, "continue", 0, bound); err != nil || res.Outcome != "running" || !strings.Contains(res.Note, "still running after 2s") {
		t.Fatalf("continue with its own wait: %+v %v", res, err)
	}
	within(t, "a continue's own wait (timeout_seconds)", t0, bound)
}

// An evaluate the adapter never answers returns within twice its wait:
// its own (timeout_seconds), or the resume wait when it gives none. Past
// the wait pause is sent and given at most the wait again.
func TestEvaluateWaitBounds(t *testing.T) {
	fakeAdapter(t, "hang-eval")
	root := fakeRoot(t)
	for _, c := range []struct {
		name       string
		cfg        Config
		wait       time.Duration
		configured time.Duration
	}{
		{"its own wait", Config{}, bound, bound},
		{"the resume wait", Config{ResumeWait: bound}, 0, bound},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSupervisor(t, root, c.cfg)
			ctx := testCtx(t)
			if _, err := s.Launch(ctx, fakeLaunch(root), 20*time.Second); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			ev, err := s.Evaluate(ctx, "spin()", "", c.wait)
			if err != nil || !ev.TimedOut {
				t.Fatalf("an evaluate never answered: %+v %v", ev, err)
			}
			within(t, "an evaluate", t0, c.configured)
		})
	}
}

// The session's time limit (Config.TTL) ends a session whose call waits
// longer: the waiting call returns when it ends, and says why.
func TestTimeLimitBoundsAWait(t *testing.T) {
	fakeAdapter(t, "forever")
	root := fakeRoot(t)
	s := newSupervisor(t, root, Config{TTL: bound})
	ctx := testCtx(t)
	t0 := time.Now()
	res, err := s.Launch(ctx, fakeLaunch(root), time.Minute)
	if err != nil || res.Outcome != "ended" || !strings.Contains(res.Ended, "time limit of 2s") {
		t.Fatalf("a launch that waits past the time limit: %+v %v", res, err)
	}
	within(t, "a launch waiting a minute in a session", t0, bound)
}

// The adapter's start (Config.StartTimeout) bounds each way it can hang:
// a stdio adapter that never answers initialize, one that should dial our
// socket and never does, and a debugpy.listen port that accepts and then
// says nothing.
func TestStartTimeoutBounds(t *testing.T) {
	t.Run("initialize never answered", func(t *testing.T) {
		fakeAdapter(t, "mute")
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{StartTimeout: bound})
		t0 := time.Now()
		_, err := s.Launch(testCtx(t), fakeLaunch(root), 0)
		if err == nil || !strings.Contains(err.Error(), "failed to initialize: no answer within 2s") {
			t.Fatalf("an adapter that never answers initialize: %v", err)
		}
		within(t, "a start on an adapter that never answers", t0, bound)
	})
	t.Run("never connects", func(t *testing.T) {
		Adapters = append(Adapters, AdapterSpec{ID: "silent", Language: "test", Commands: [][]string{{"sleep", "60"}}, Transport: UnixClient, Adapter: scripted{}})
		t.Cleanup(func() { Adapters = Adapters[:len(Adapters)-1] })
		root := fakeRoot(t)
		s := newSupervisor(t, root, Config{StartTimeout: bound})
		t0 := time.Now()
		_, err := s.Launch(testCtx(t), LaunchSpec{Adapter: "silent", Program: at(root, fakeSource)}, 0)
		if err == nil || !strings.Contains(err.Error(), "did not connect: no connection within 2s") {
			t.Fatalf("an adapter that never connects: %v", err)
		}
		within(t, "a start on an adapter that never connects", t0, bound)
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
		t0 := time.Now()
		_, err = s.Launch(testCtx(t), LaunchSpec{Attach: true, Port: ln.Addr().(*net.TCPAddr).Port}, 0)
		if err == nil || !strings.Contains(err.Error(), "no answer within 2s") {
			t.Fatalf("a port that accepts and says nothing: %v", err)
		}
		within(t, "an attach to a port that says nothing", t0, bound)
	})
}

// The launch bound (Config.LaunchTimeout) ends a launch the adapter never
// answers; the teardown does not wait on that adapter again.
func TestLaunchTimeoutBounds(t *testing.T) {
	fakeAdapter(t, "hang-launch")
	root := fakeRoot(t)
	s := newSupervisor(t, root, Config{LaunchTimeout: bound})
	t0 := time.Now()
	_, err := s.Launch(testCtx(t), fakeLaunch(root), 0)
	if err == nil || !strings.Contains(err.Error(), "did not finish the launch in time") {
		t.Fatalf("a launch never answered: %v", err)
	}
	within(t, "a launch never answered", t0, bound)
	if st := s.Status(); st.Session != nil {
		t.Fatalf("left a session: %+v", st.Session)
	}
}
