package lsp

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// LSP-7, PRE-1: two runs share one gopls; run A's preview of a change
// that breaks the build starts just after run B synced its file for a
// hover and before B's request goes out. The preview waits for B's call
// (B's call holds the server's view), so B's hover never sees the unsaved
// text, and the preview is then checked as usual.
func TestPreviewHiddenFromAnotherRun(t *testing.T) {
	t.Parallel()
	pl := pool.New()
	a := newSession(t, "go", "gopls", Config{Pool: pl})
	shapes := a.read("shapes/shapes.go")
	broken := strings.Replace(shapes, "func Total(shapes []Shape) float64 {", "func Total(shapes []Shape) int {", 1)

	var armed atomic.Bool
	sent := make(chan struct{}, 1)     // the preview's versions are in the server
	answered := make(chan struct{}, 1) // B's hover was answered
	previewed := make(chan *Preview, 1)
	a.sup.tools.hooks = &testHooks{shared: true,
		beforeSend: func(_ *server, method string) {
			if method != "textDocument/hover" || !armed.CompareAndSwap(true, false) {
				return
			}
			go func() {
				p, err := a.sup.Preview(a.ctx, []Proposed{{File: a.at("shapes/shapes.go"), Text: []byte(broken)}})
				if err != nil {
					t.Error(err)
				}
				previewed <- p
			}()
			// Unfixed, the preview's text is in the server before B's
			// hover is sent; fixed, the preview waits for B.
			select {
			case <-sent:
			case <-time.After(2 * time.Second):
			}
		},
		previewSent: func(*server) {
			sent <- struct{}{}
			select {
			case <-answered:
			case <-time.After(2 * time.Second):
			}
		}}
	b := NewSupervisor(a.root, Config{Pool: pl})
	t.Cleanup(func() { b.Close() })

	// Both runs use the one server before.
	must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	must(b.Diagnostics(a.ctx, loc(t, b, a.path("shapes/shapes.go"))))(t)
	if got := a.sup.fleet.runningEntries(); len(got) != 1 || got[0].clients != 2 {
		t.Fatalf("want one gopls held by both runs, got %+v", got)
	}

	armed.Store(true)
	h, err := b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"})
	answered <- struct{}{}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Contents, "[]shapes.Shape) float64") {
		t.Errorf("run B's hover saw run A's preview: %s", h.Contents)
	}
	var p *Preview
	select {
	case p = <-previewed:
	case <-time.After(2 * time.Minute):
		t.Fatal("the preview did not end")
	}
	if p == nil || p.Files[0].State != diag.Checked || len(p.Files[0].New) != 1 {
		t.Fatalf("the preview: %+v", p)
	}
	d := must(b.Diagnostics(a.ctx, loc(t, b, a.path("shapes/shapes.go"))))(t)
	for _, x := range d.Diagnostics {
		if x.Severity == diag.SeverityError {
			t.Errorf("run B's diagnostics after the preview: %s", x.Message)
		}
	}
	if n := b.fleet.unsavedDocs(); n != 0 {
		t.Errorf("%d unsaved versions left behind", n)
	}
}

// LSP-1 over a pool: a shared server unused by every run for the idle
// time is stopped; the runs' next call starts another.
func TestSharedServerIdleReaped(t *testing.T) {
	t.Parallel()
	testenv.LookPath(t, "gopls")
	cfg := Config{Pool: pool.New(), IdleTimeout: 300 * time.Millisecond}
	a := newSession(t, "go", "gopls", cfg)
	b := NewSupervisor(a.root, cfg)
	t.Cleanup(func() { b.Close() })
	must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	must(b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	first := a.sup.fleet.running()
	if len(first) != 1 || len(b.fleet.running()) != 1 || b.fleet.running()[0] != first[0] {
		t.Fatalf("want one shared server, got %d and %d", len(first), len(b.fleet.running()))
	}
	deadline := time.Now().Add(time.Minute)
	for first[0].Alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if first[0].Alive() {
		t.Fatal("the idle shared server was not stopped")
	}
	if len(a.sup.fleet.running()) != 0 || len(b.fleet.running()) != 0 {
		t.Fatal("a reaped server is still listed as running")
	}
	must(b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	if got := a.sup.Status(context.Background()); len(got.Servers) == 0 {
		t.Fatal("no status")
	}
}

// LSP-1 over a pool: a shared server that crashed is reported to each run
// that held it, on its next call, and both runs then share the new one.
func TestSharedServerCrashRestartsOnce(t *testing.T) {
	t.Parallel()
	cfg := Config{Pool: pool.New()}
	a := newSession(t, "go", "gopls", cfg)
	b := NewSupervisor(a.root, cfg)
	t.Cleanup(func() { b.Close() })
	old, ra, rb := killShared(t, a, b)
	if len(ra) != 1 || len(rb) != 1 || ra[0] != rb[0] || ra[0] == old {
		t.Fatalf("after the crash: want both runs on one new server, got %d and %d", len(ra), len(rb))
	}
	for _, sup := range []*Supervisor{a.sup, b} {
		st := sup.Status(a.ctx)
		if len(st.Servers[0].Crashes) != 1 || st.Servers[0].Running[0].Clients != 2 {
			t.Errorf("status: %+v", st.Servers[0])
		}
	}
}

// killShared has a and b each answer a hover through the server they
// share, kills it, waits for its end to be seen, and has each answer
// again: it returns the killed server and the servers each runs after.
func killShared(t *testing.T, a *session, b *Supervisor) (old *server, ra, rb []*server) {
	t.Helper()
	hover := func() {
		must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		must(b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	}
	hover()
	old = a.sup.fleet.running()[0]
	if err := syscall.Kill(old.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.exited:
	case <-time.After(time.Minute):
		t.Fatal("the killed server's end was not seen")
	}
	hover()
	return old, a.sup.fleet.running(), b.fleet.running()
}
