package lsp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// Issue 19 §2 (guard): every configurable timeout of lsp bounds its call.
// Each is set small against a fake server (or probe, or checker) that
// never answers, under a context of a minute: the call must end by the
// timeout's own error, which names it, before the context ends. (The
// fake server is a process on real pipes, which no synctest bubble can
// hold; the error, not a measured duration, says which limit ended the
// call.)
func TestEveryTimeoutBounds(t *testing.T) {
	t.Parallel()
	const d = time.Second
	within := func(t *testing.T, what string, call func(ctx context.Context) error, check func(error)) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := call(ctx)
		if ctx.Err() != nil {
			t.Errorf("%s ended only with the test's minute: %v", what, err)
		}
		check(err)
	}

	// hover asks sup about "world" on the first line of file in root.
	hover := func(t *testing.T, sup *Supervisor, root, file string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := sup.Hover(ctx, loc(t, sup, filepath.Join(root, file)), protocol.Place{Line: 1, Symbol: "world"})
			return err
		}
	}
	t.Run("StartTimeout", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "silent")}, StartTimeout: d})
		defer sup.Close()
		within(t, "a first call to a server that never initializes", hover(t, sup, root, "a.fake"), func(err error) {
			expectErr(t, "hover", err, ErrServerTimeout, "did not finish starting (initialize) within 1s")
		})
	})
	t.Run("RequestTimeout", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "mute")}, RequestTimeout: d})
		defer sup.Close()
		within(t, "a request the server never answers", func(ctx context.Context) error {
			_, err := sup.Definition(ctx, loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
			return err
		}, func(err error) { expectErr(t, "definition", err, ErrServerTimeout, "no answer within 1s") })
	})
	t.Run("RequestTimeout/write", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		big := "hello world\n" + string(make([]byte, 2<<20)) // far over a pipe's buffer
		if err := os.WriteFile(filepath.Join(root, "big.fake"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "deaf")}, RequestTimeout: d})
		defer sup.Close()
		within(t, "a document the server never reads", hover(t, sup, root, "big.fake"), func(err error) { expectErr(t, "hover", err, ErrServerTimeout, "it stopped reading its input") })
	})
	t.Run("DiagnosticsWait", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "mute")}, DiagnosticsWait: d})
		defer sup.Close()
		at := loc(t, sup, filepath.Join(root, "a.fake"))
		within(t, "the diagnostics after a write", func(ctx context.Context) error {
			_, err := sup.AfterWrite(ctx, at)
			return err
		}, func(err error) {
			expectErr(t, "after write", err, ErrDiagnosticsTimeout, "published no diagnostics for a.fake version 1 within 1s")
		})
		within(t, "lsp diagnostics", func(ctx context.Context) error {
			res, err := sup.Diagnostics(ctx, at)
			if err == nil && !res.Incomplete {
				t.Errorf("diagnostics that never came are not marked incomplete: %+v", res)
			}
			return err
		}, func(err error) {
			if err != nil {
				t.Errorf("diagnostics: %v", err)
			}
		})
	})
	t.Run("CheckerTimeout", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		spec := fakeSpec(t, "mute")
		spec.Checker = []string{spec.Command[0], "-fake-lsp=hang"}
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, CheckerTimeout: d})
		defer sup.Close()
		var rep *answer.CheckReport
		within(t, "a checker that never ends", func(ctx context.Context) error {
			var err error
			rep, err = sup.Check(ctx)
			return err
		}, func(err error) {
			if err != nil || len(rep.Runs) != 1 || !rep.Runs[0].TimedOut || rep.Runs[0].TimeoutMS != 1000 {
				t.Errorf("check: %v %+v", err, rep)
			}
		})
	})
	t.Run("ProbeTimeout", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		spec := fakeSpec(t, "mute")
		// A name of its own: probes are remembered per program.
		bin := filepath.Join(t.TempDir(), "fake-probe")
		if err := os.Symlink(spec.Command[0], bin); err != nil {
			t.Fatal(err)
		}
		spec.Command[0], spec.Probe = bin, []string{"-fake-lsp=hang"}
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, ProbeTimeout: d})
		defer sup.Close()
		within(t, "a probe that never ends", hover(t, sup, root, "a.fake"), func(err error) {
			expectErr(t, "hover", err, ErrUnavailable, "-fake-lsp=hang` did not finish within 1s")
		})
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		t.Parallel()
		root := fakeRoot(t)
		sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "mute")}, IdleTimeout: d, DiagnosticsWait: 100 * time.Millisecond})
		defer sup.Close()
		if _, err := sup.AfterWrite(t.Context(), loc(t, sup, filepath.Join(root, "a.fake"))); err == nil {
			t.Fatal("the mute server published diagnostics")
		}
		pgids := runningGroups(sup)
		testenv.WaitFor(t, time.Minute, "reaping an idle server", func() bool { return len(sup.fleet.running()) == 0 })
		expectNoProcesses(t, pgids)
	})
}
