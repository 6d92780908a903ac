package lsp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// waitExit waits for srv to exit, failing the test after a minute.
func waitExit(t *testing.T, srv *server, what string) {
	t.Helper()
	select {
	case <-srv.exited:
	case <-time.After(time.Minute):
		t.Fatalf("%s: gopls (pid %d) still runs", what, srv.PID())
	}
}

// treeRSS is the resident memory of each server's process tree, read
// once no server runs a child of another program: gopls runs go list and
// go env now and then, and such a child counted in one reading and gone
// at the start that compares against the budget moves the sum by more
// than the margins below. (gopls keeps a child of its own program, its
// telemetry, for good.)
func treeRSS(t *testing.T, srvs ...*server) []int64 {
	t.Helper()
	var out []int64
	testenv.WaitFor(t, 30*time.Second, "servers without a passing child", func() bool {
		children := proc.ChildMap()
		out = out[:0]
		for _, srv := range srvs {
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", srv.PID()))
			for _, c := range children[srv.PID()] {
				if other, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", c)); other != exe {
					return false
				}
			}
			out = append(out, proc.TreeRSSKB(srv.PID(), children))
		}
		return true
	})
	for i, kb := range out {
		if kb == 0 {
			t.Fatalf("no resident memory read for pid %d", srvs[i].PID())
		}
	}
	return out
}

// LSP-8: three runs over three copies of a Go module share one pool.
// With a budget that the two running gopls exceed, the start of a third
// stops the least recently used idle one, and only it; the status of the
// run that held it says so, and that run's next call starts it again.
// With a budget every server exceeds on its own, a start stops every
// idle server, and status names the one over the budget with its memory.
func TestBudgetStopsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	pl := pool.New()
	pl.SetBudget(-1)
	cfg := Config{Pool: pl}
	a := newSession(t, "go", "gopls", cfg)
	b := newSession(t, "go", "gopls", cfg)
	c := newSession(t, "go", "gopls", cfg)
	hover := func(s *session) {
		t.Helper()
		h, err := s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"})
		if err != nil || !strings.Contains(h.Contents, "Total") {
			t.Fatalf("hover in %s: %v %+v", s.root, err, h)
		}
	}
	hover(a)
	hover(b)
	hover(a) // b's server is now the least recently used
	srvA, srvB := a.sup.fleet.running()[0], b.sup.fleet.running()[0]
	rss := treeRSS(t, srvA, srvB)
	rssA, rssB := rss[0], rss[1]
	// Over the two together by far less than either: one stop is enough.
	pl.SetBudget((rssA + rssB/2) * 1024)
	hover(c)
	waitExit(t, srvB, "the least recently used idle server")
	if !srvA.Alive() {
		t.Fatal("the more recently used server was stopped too")
	}
	if got := pl.Servers(); len(got) != 2 {
		t.Fatalf("after the stop the pool holds %+v", got)
	}
	st := b.sup.Status(context.Background()).Pool
	if len(st.Stopped) != 1 || st.Stopped[0].Root != "." || st.Stopped[0].OtherFolder || st.Stopped[0].For != "gopls for another folder" ||
		st.Stopped[0].MemoryKB <= 0 || st.Stopped[0].UsedKB < st.Stopped[0].BudgetKB {
		t.Fatalf("b's status does not tell the stop of its server: %+v", st)
	}
	if len(st.Servers) != 2 || !st.Servers[0].OtherFolder || st.Servers[0].Root != "" || st.Servers[0].ThisRun {
		t.Fatalf("b's status of the pool: %+v", st.Servers)
	}
	for _, r := range st.Servers {
		if r.State != pool.Idle || r.Clients != 1 || r.MemoryKB <= 0 || r.PID == 0 {
			t.Errorf("b's status row: %+v", r)
		}
	}
	if st := a.sup.Status(context.Background()).Pool; len(st.Stopped) != 1 || !st.Stopped[0].OtherFolder || st.Stopped[0].Root != "" {
		t.Fatalf("a's status names another run's folder: %+v", st.Stopped)
	}

	// b's next call starts its server again (the pool stays over budget
	// with three running, so the least recently used, a's, is stopped).
	// The budget is set again from what a's and c's servers hold now, under
	// the two together by half the smaller and over either alone: their
	// memory has moved since the first one was set.
	srvC := c.sup.fleet.running()[0]
	now := treeRSS(t, srvA, srvC)
	nowA, nowC := now[0], now[1]
	pl.SetBudget((nowA + nowC - min(nowA, nowC)/2) * 1024)
	hover(b)
	waitExit(t, srvA, "the least recently used idle server, on b's restart")

	// A budget each server exceeds alone: a start stops every idle one,
	// and the one left is named over the budget.
	pl.SetBudget(1024)
	hover(a)
	for _, s := range []*session{b, c} {
		for _, srv := range s.sup.fleet.running() {
			waitExit(t, srv, "an idle server under a budget every server exceeds")
		}
	}
	full := a.sup.Status(context.Background())
	if len(full.Pool.Servers) != 1 || !full.Pool.Servers[0].OverBudget || !full.Pool.Servers[0].ThisRun || full.Pool.BudgetKB != 1 {
		t.Fatalf("a's status: %+v", full.Pool)
	}
	for _, row := range full.Servers {
		if row.ID == "gopls" && (len(row.Running) != 1 || !row.Running[0].OverBudget) {
			t.Errorf("a's gopls row is not named over the budget: %+v", row.Running)
		}
	}
	if n := len(full.Pool.Stopped); n != 4 {
		t.Errorf("want 4 stops told (b, a, then b and c), got %+v", full.Pool.Stopped)
	}
}

// LSP-8: a server held by a preview is never stopped for the budget; the
// start that wanted room goes ahead beside it.
func TestBudgetSparesServerInPreview(t *testing.T) {
	t.Parallel()
	pl := pool.New()
	pl.SetBudget(1024)
	a := newSession(t, "go", "gopls", Config{Pool: pl})
	b := newSession(t, "go", "gopls", Config{Pool: pl})
	must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	srvA := a.sup.fleet.running()[0]
	startedB := make(chan error, 1)
	a.sup.tools.hooks = &testHooks{shared: true, previewSent: func(*server) {
		// a's server is mid-preview: b's start must leave it running.
		_, err := b.sup.Hover(b.ctx, b.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"})
		startedB <- err
	}}
	shapes := a.read("shapes/shapes.go")
	broken := strings.Replace(shapes, "func Total(shapes []Shape) float64 {", "func Total(shapes []Shape) int {", 1)
	p, err := a.sup.Preview(a.ctx, []Proposed{{File: a.at("shapes/shapes.go"), Text: []byte(broken)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-startedB; err != nil {
		t.Fatalf("b's hover during a's preview: %v", err)
	}
	if !srvA.Alive() {
		t.Fatal("the server held by a preview was stopped for the budget")
	}
	if p.Files[0].State != diag.Checked {
		t.Errorf("the preview: %+v", p.Files[0])
	}
	if st := pl.Servers(); len(st) != 2 {
		t.Errorf("want both servers running, got %+v", st)
	}
	if got := a.sup.Status(context.Background()).Pool.Stopped; len(got) != 0 {
		t.Errorf("stops told: %+v", got)
	}
}
