package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// LSP-9: two Supervisors with pools of their own (as two processes have)
// reach one gopls through the broker: both answer, a preview by one is
// held from the other, and the broker ends the server once neither holds
// it, then ends itself.
func TestBrokerSharesServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	// Idle time counts use: at 500 ms a loaded machine (load 11) let the
	// server idle out between a's answer and b's join, so b started another.
	go func() { served <- broker.Serve(ctx, dir, 3*time.Second, 5*time.Second, 0) }()
	for range 500 {
		if listening(dir) {
			break
		}
		select {
		case err := <-served:
			t.Fatalf("the broker ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	b := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir})
	t.Cleanup(func() { b.Close() })
	h := must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	if !strings.Contains(h.Contents, "float64") {
		t.Fatalf("a's hover: %+v", h)
	}
	t0 := time.Now()
	h = must(b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	t.Logf("b's first answer, through the broker's warm gopls: %v", time.Since(t0))
	if !strings.Contains(h.Contents, "float64") {
		t.Fatalf("b's hover: %+v", h)
	}
	pa, pb := a.sup.fleet.running()[0].PID(), b.fleet.running()[0].PID()
	if pa != pb {
		t.Fatalf("two servers: %d and %d", pa, pb)
	}
	// b joined it warm: it asked the toolchain managers for no pins (nor
	// probed gopls, nor prepared a start).
	if _, pinned := b.tools.env.Pinned(); pinned {
		t.Error("b worked out the pins for a server the broker runs warm")
	}
	if st := a.sup.Status(a.ctx).Pool; len(st.Servers) != 1 || st.Servers[0].Processes != 2 || st.Servers[0].Clients != 1 {
		t.Fatalf("a's status of the shared server: %+v", st.Servers)
	}
	// The broker's servers, as a's status lists them: the one, with both
	// processes, its memory and last use.
	if br := a.sup.Status(a.ctx).Pool.Broker; br == nil || len(br.Servers) != 1 || br.Servers[0].Processes != 2 || br.Servers[0].Root != "." ||
		br.Servers[0].PID != pa || br.Servers[0].MemoryKB <= 0 || br.UsedKB != br.Servers[0].MemoryKB {
		t.Fatalf("a's status of the broker: %+v", br)
	}
	// a previews a break; b's diagnostics never see it.
	shapes := a.read("shapes/shapes.go")
	broken := strings.Replace(shapes, "func Total(shapes []Shape) float64 {", "func Total(shapes []Shape) int {", 1)
	p, err := a.sup.Preview(a.ctx, []Proposed{{File: a.at("shapes/shapes.go"), Text: []byte(broken)}})
	if err != nil || p.Files[0].State != diag.Checked || len(p.Files[0].New) == 0 {
		t.Fatalf("a's preview: %v %+v", err, p)
	}
	d := must(b.Diagnostics(a.ctx, loc(t, b, a.path("shapes/shapes.go"))))(t)
	for _, x := range d.Diagnostics {
		if x.Severity == diag.SeverityError {
			t.Errorf("b's diagnostics after a's preview: %s", x.Message)
		}
	}
	a.sup.Close()
	b.Close()
	if !testenv.Gone(pa) {
		t.Fatalf("gopls %d outlived its clients past the idle time", pa)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the broker did not end with nothing to serve")
	}
}

func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// startBroker serves a broker in dir for the test.
func startBroker(t *testing.T, dir string) {
	t.Helper()
	startBrokerIdle(t, dir, 0, 0)
}

// startBrokerIdle serves a broker in dir that caps its servers' idle
// time at idle (when positive), with a memory budget of budgetKB.
func startBrokerIdle(t *testing.T, dir string, idle time.Duration, budgetKB int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- broker.Serve(ctx, dir, 3*time.Second, idle, budgetKB) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	testenv.WaitFor(t, 5*time.Second, "the broker's socket", func() bool { return listening(dir) })
}

// listening reports whether the broker in dir accepts connections: its
// socket's file comes at bind, before listen (CI once got "connection
// refused" after seeing the file).
func listening(dir string) bool {
	c, err := net.Dial("unix", broker.Socket(dir))
	if err == nil {
		c.Close()
	}
	return err == nil
}

// LSP-9, LSP-1: the broker's idle time runs from the last use by any
// process, not from the last connection's end: two processes whose own
// pools would keep their connections for an hour still see the shared
// gopls stop once neither has used it for the broker's idle time (1 s),
// and their next call starts it again with no crash noted. Before, the
// server lived as long as a connection did.
func TestBrokerIdleCountsUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBrokerIdle(t, dir, time.Second, 0)
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir, IdleTimeout: time.Hour})
	b := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir, IdleTimeout: time.Hour})
	t.Cleanup(func() { b.Close() })
	hover := func(s *Supervisor) {
		t.Helper()
		h := must(s.Hover(a.ctx, loc(t, s, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if !strings.Contains(h.Contents, "float64") {
			t.Fatalf("hover: %+v", h)
		}
	}
	hover(a.sup)
	hover(b)
	pid := a.sup.fleet.running()[0].PID()
	if !testenv.Gone(pid) {
		t.Fatalf("gopls %d outlived its last use by a minute while the processes stayed connected (idle time 1 s)", pid)
	}
	hover(b)
	hover(a.sup)
	if got := b.fleet.running()[0].PID(); got == pid || got != a.sup.fleet.running()[0].PID() {
		t.Fatalf("after the idle stop: want both on one new server, got %d and %d (old %d)", got, a.sup.fleet.running()[0].PID(), pid)
	}
	for _, s := range []*Supervisor{a.sup, b} {
		for _, row := range s.Status(a.ctx).Servers {
			if len(row.Crashes) > 0 {
				t.Errorf("an idle stop noted as a crash: %+v", row.Crashes)
			}
		}
	}
}

// LSP-8, LSP-9: one budget over the broker's servers, whichever process
// started them: the broker's, set at its start (1 KiB here), whatever
// budget the processes have (none). Two processes (pools of their own)
// on two folders: b's server starting stops a's gopls, idle, which
// a's own pool did not count (before, both ran); a's next call starts it
// again with no crash noted, stopping b's. A server under a preview's
// hold is not idle: it is spared, and both run. Each process's status
// says the broker's budget governs.
func TestBrokerBudgetStopsIdle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBrokerIdle(t, dir, 0, 1)
	cfg := Config{Broker: dir, MemoryBudget: -1}
	cfg.Pool = pool.New()
	a := newSession(t, "go", "gopls", cfg)
	cfg.Pool = pool.New()
	bs := newSession(t, "go", "gopls", cfg)
	hover := func(s *session) {
		t.Helper()
		h := must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if !strings.Contains(h.Contents, "float64") {
			t.Fatalf("hover: %+v", h)
		}
	}
	gone := func(pid int) {
		t.Helper()
		if !testenv.Gone(pid) {
			t.Fatalf("gopls %d, idle, outlived a start over the budget", pid)
		}
	}
	hover(a)
	pa := a.sup.fleet.running()[0].PID()
	hover(bs)
	pb := bs.sup.fleet.running()[0].PID()
	if st := bs.sup.Status(bs.ctx).Pool; st == nil || st.BudgetKB != 0 || st.Broker == nil || st.Broker.BudgetKB != 1 {
		t.Fatalf("b's status: want its own budget none and the broker's 1 KiB, got %+v", st)
	}
	gone(pa)
	hover(a)
	gone(pb)
	for _, s := range []*session{a, bs} {
		for _, row := range s.sup.Status(s.ctx).Servers {
			if len(row.Crashes) > 0 {
				t.Errorf("a stop for the budget noted as a crash: %+v", row.Crashes)
			}
		}
	}
	// a's server held (a preview): b's start spares it.
	srv := a.sup.fleet.running()[0]
	if err := srv.view.Share(a.ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := srv.holdAlone(a.ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	hover(bs)
	if !processAlive(srv.PID()) {
		t.Error("a held server was stopped for the budget")
	}
	srv.unholdAlone()
	srv.view.Unshare()
	if n := len(bs.sup.fleet.running()); n != 1 {
		t.Errorf("b: %d servers", n)
	}
}

// LSP-9, LSP-1: a server the broker holds that crashes is reported to
// each process's run on its next call, with how it ended, and restarts
// once: both share the new one.
func TestBrokerServerCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBroker(t, dir)
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	b := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir})
	t.Cleanup(func() { b.Close() })
	old, ra, rb := killShared(t, a, b)
	if len(ra) != 1 || len(rb) != 1 || ra[0].PID() != rb[0].PID() || ra[0].PID() == old.PID() {
		t.Fatalf("after the crash: want both on one new server, got %d and %d", len(ra), len(rb))
	}
	for _, sup := range []*Supervisor{a.sup, b} {
		st := sup.Status(a.ctx)
		for _, row := range st.Servers {
			if row.ID == "gopls" && (len(row.Crashes) != 1 || !strings.Contains(row.Crashes[0].Error, "killed")) {
				t.Errorf("status: %+v", row.Crashes)
			}
		}
	}
}

// LSP-9: three processes' first calls at once: one server starts, the
// first initialize reaches it, the others are answered from its result.
func TestBrokerConcurrentStarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBroker(t, dir)
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	sups := []*Supervisor{a.sup}
	for range 2 {
		s := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir})
		t.Cleanup(func() { s.Close() })
		sups = append(sups, s)
	}
	errs := make(chan error, len(sups))
	for _, s := range sups {
		go func() {
			h, err := s.Hover(a.ctx, loc(t, s, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"})
			if err == nil && !strings.Contains(h.Contents, "float64") {
				err = errors.New("hover: " + h.Contents)
			}
			errs <- err
		}()
	}
	for range sups {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	pid := sups[0].fleet.running()[0].PID()
	for _, s := range sups[1:] {
		if got := s.fleet.running()[0].PID(); got != pid {
			t.Fatalf("servers %d and %d", pid, got)
		}
	}
}

// LSP-9: through the broker, an untrusted process never gets the server a
// trusted one started: trust and the environment are the server's key.
func TestBrokerKeepsTrustApart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBroker(t, dir)
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	b := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir, Trusted: true})
	t.Cleanup(func() { b.Close() })
	must(a.sup.Hover(a.ctx, a.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	must(b.Hover(a.ctx, loc(t, b, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	if pa, pb := a.sup.fleet.running()[0].PID(), b.fleet.running()[0].PID(); pa == pb {
		t.Fatalf("trusted and untrusted processes share gopls %d", pa)
	}
}

// sentToServer is the broker's count of document notifications it has
// sent srv's server.
func sentToServer(t *testing.T, ctx context.Context, srv *server) int64 {
	t.Helper()
	var res struct {
		Sent int64 `json:"documentNotifications"`
	}
	if err := srv.conn.Call(ctx, "$/builtintools/clients", nil, &res); err != nil {
		t.Fatal(err)
	}
	return res.Sent
}

// LSP-9, issue 32: a process that opens a file the broker's gopls has
// open with the same text gets the diagnostics gopls last published for
// it, replayed: nothing reaches gopls, which has nothing to check again.
// A process whose text differs gets none of another's: its text goes to
// gopls and it waits for their check.
func TestBrokerReplaysDiagnostics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBroker(t, dir)
	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	a.write("bad.go", "package main\n\nfunc bad() int { return undefinedOne }\n")
	d := must(a.sup.Diagnostics(a.ctx, a.at("bad.go")))(t)
	if len(d.Diagnostics) != 1 || !strings.Contains(d.Diagnostics[0].Message, "undefinedOne") {
		t.Fatalf("a's diagnostics: %+v", d.Diagnostics)
	}
	srvA := a.sup.fleet.running()[0]

	join := func() (*Supervisor, *[]string) {
		var mu sync.Mutex
		var replayed []string
		s := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir, Observe: func(n Notification) {
			var p protocol.PublishDiagnosticsParams
			if n.Method == "textDocument/publishDiagnostics" && json.Unmarshal(n.Params, &p) == nil && strings.HasSuffix(p.URI, "/bad.go") && p.QuietMS > 0 {
				mu.Lock()
				replayed = append(replayed, p.URI)
				mu.Unlock()
			}
		}})
		t.Cleanup(func() { s.Close() })
		return s, &replayed
	}
	before := sentToServer(t, a.ctx, srvA)
	b, replayed := join()
	d = must(b.Diagnostics(a.ctx, loc(t, b, a.path("bad.go"))))(t)
	if len(d.Diagnostics) != 1 || !strings.Contains(d.Diagnostics[0].Message, "undefinedOne") {
		t.Fatalf("b's diagnostics: %+v", d.Diagnostics)
	}
	if b.fleet.running()[0].PID() != srvA.PID() {
		t.Fatal("b has a gopls of its own")
	}
	if after := sentToServer(t, a.ctx, srvA); after != before {
		t.Errorf("b's open of the text gopls has sent it %d document notifications; want none", after-before)
	}
	if len(*replayed) != 1 {
		t.Errorf("b's diagnostics came from %d replays; want 1", len(*replayed))
	}

	// The file changed on disk; a has not looked again, so gopls has
	// the old text. c's is the new one: c must see its own error only.
	a.write("bad.go", "package main\n\nfunc bad() int { return undefinedTwo }\n")
	c, replayed := join()
	d = must(c.Diagnostics(a.ctx, loc(t, c, a.path("bad.go"))))(t)
	if len(d.Diagnostics) != 1 || !strings.Contains(d.Diagnostics[0].Message, "undefinedTwo") {
		t.Fatalf("c's diagnostics of the new text: %+v", d.Diagnostics)
	}
	if len(*replayed) != 0 {
		t.Errorf("c, whose text gopls did not have, got %d replays", len(*replayed))
	}
}

// LSP-9 beyond gopls: two processes (Supervisors with pools of their
// own) share one typescript-language-server, pyright or clangd through
// the broker; the second's first diagnostics are complete (pyright
// registers its pull diagnostics with the first client only: the broker
// tells every client); and a preview by one stays hidden from the
// other, which asks while the preview's text is in the server.
func TestBrokerSharesOtherServers(t *testing.T) {
	for _, tc := range []struct{ fixture, program, file, add, want string }{
		{"ts", "typescript-language-server", "src/main.ts", "\nundefinedX();\n", "undefinedX"},
		{"python", "pyright-langserver", "main.py", "\nundefinedX()\n", "undefinedX"},
		{"c", "clangd", "main.c", "\nint broken(void) { return undefinedX; }\n", "undefinedX"},
	} {
		t.Run(tc.program, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "broker")
			startBroker(t, dir)
			a := newSession(t, tc.fixture, tc.program, Config{Pool: pool.New(), Broker: dir})
			b := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir})
			t.Cleanup(func() { b.Close() })
			at, bt := a.at(tc.file), loc(t, b, a.path(tc.file))
			must(a.sup.Diagnostics(a.ctx, at))(t)
			t0 := time.Now()
			// b learns what the server registered for a (pyright's pull
			// diagnostics): its answer is complete, not a wait for a
			// publish that never comes.
			if d := must(b.Diagnostics(a.ctx, bt))(t); d.Incomplete {
				t.Errorf("b's first diagnostics from the warm server are incomplete: %+v", d)
			}
			t.Logf("b's first answer from the warm server: %v", time.Since(t0))
			if pa, pb := a.sup.fleet.running()[0].PID(), b.fleet.running()[0].PID(); pa != pb {
				t.Fatalf("two servers: %d and %d", pa, pb)
			}
			type reply struct {
				d   *answer.FileDiagnostics
				err error
			}
			during := make(chan reply, 1)
			a.sup.tools.hooks = &testHooks{shared: true, previewSent: func(*server) {
				go func() {
					d, err := b.Diagnostics(a.ctx, bt)
					during <- reply{d, err}
				}()
				// b's call waits for the preview's hold; the preview goes
				// on after a while either way.
				select {
				case r := <-during:
					during <- r
				case <-time.After(time.Second):
				}
			}}
			p, err := a.sup.Preview(a.ctx, []Proposed{{File: at, Text: []byte(a.read(tc.file) + tc.add)}})
			if err != nil || p.Files[0].State != diag.Checked || !slices.ContainsFunc(p.Files[0].New, func(d diag.Finding) bool { return strings.Contains(d.Message, tc.want) }) {
				t.Fatalf("a's preview: %v %+v", err, p)
			}
			r := <-during
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, d := range r.d.Diagnostics {
				if strings.Contains(d.Message, tc.want) {
					t.Errorf("b's diagnostics during a's preview: %s", d.Message)
				}
			}
		})
	}
}

// LSP-9, N1: a process that would join a warm server by its name checks
// the managers' global settings its pins come from (toolenv's
// pinSources): after the user's default toolchain changed (rustup's
// settings.toml here, read by a rustup first on PATH), the next process
// starts a server of its own with the new pin, while one with the old
// default still joins the first; and a run that worked out the old
// default's pins starts its next server with the new, under the new name.
// Before, the next process joined the server of the old default by name,
// until that one idled out.
func TestBrokerWarmJoinSeesNewDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	startBroker(t, dir)
	bin, rustupHome := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, bin, map[string]string{"rustup": "#!/bin/sh\n" +
		`[ "$1" = default ] && sed -n 's/^default_toolchain = "\(.*\)"/\1 (default)/p' "$RUSTUP_HOME/settings.toml"` + "\n"})
	if err := os.Chmod(filepath.Join(bin, "rustup"), 0o755); err != nil {
		t.Fatal(err)
	}
	setDefault := func(tc string) {
		if err := os.WriteFile(filepath.Join(rustupHome, "settings.toml"), []byte("default_toolchain = \""+tc+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testenv.SetupPath()
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	t.Setenv("RUSTUP_HOME", rustupHome)
	t.Setenv("RUSTUP_TOOLCHAIN", "")
	setDefault("stable")

	a := newSession(t, "go", "gopls", Config{Pool: pool.New(), Broker: dir})
	process := func() *Supervisor {
		s := NewSupervisor(a.root, Config{Pool: pool.New(), Broker: dir})
		t.Cleanup(func() { s.Close() })
		return s
	}
	hover := func(s *Supervisor) int {
		t.Helper()
		h := must(s.Hover(a.ctx, loc(t, s, a.path("main.go")), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if !strings.Contains(h.Contents, "float64") {
			t.Fatalf("hover: %+v", h)
		}
		return s.fleet.running()[0].PID()
	}
	first := hover(a.sup)
	if !slices.Contains(a.sup.tools.env.Pins(), "RUSTUP_TOOLCHAIN=stable") {
		t.Fatalf("the first process's pins: %v", a.sup.tools.env.Pins())
	}
	b := process()
	if got := hover(b); got != first {
		t.Fatalf("a process of the same default: server %d (the first's %d)", got, first)
	}
	if _, pinned := b.tools.env.Pinned(); pinned {
		t.Fatal("a process of the same default worked out the pins")
	}
	stale := process()
	stale.tools.env.Pins()

	setDefault("nightly")
	c := process()
	if got := hover(c); got == first {
		t.Fatalf("a process whose default changed joined the server of the old one (%d)", first)
	}
	if !slices.Contains(c.tools.env.Pins(), "RUSTUP_TOOLCHAIN=nightly") {
		t.Fatalf("the new process's pins: %v", c.tools.env.Pins())
	}
	ch, err := stale.tools.choose(a.path("main.go"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := stale.tools.launch(ch, stale.co.Guard())
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(l.StateDir)
	if l.warm != c.tools.warmKey(ch) || !slices.Contains(l.Env, "RUSTUP_TOOLCHAIN=nightly") {
		t.Fatalf("a run that worked out the old default's pins starts with %v, named %q (the new process's %q)", l.Env, l.warm, c.tools.warmKey(ch))
	}
}
