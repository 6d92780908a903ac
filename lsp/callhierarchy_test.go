package lsp

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// CallHierarchy keeps every site where IncomingCalls cuts at
// MaxCallSites, in the same order, and names the function asked about.
func TestCallHierarchyAllSites(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	var b strings.Builder
	b.WriteString("package main\n\nimport \"example.com/fixture/shapes\"\n\nfunc more() {\n")
	for range answer.MaxCallSites + 5 {
		b.WriteString("\tshapes.Total(nil)\n")
	}
	b.WriteString("}\n")
	s.write("more.go", b.String())

	capped := must(s.sup.IncomingCalls(s.ctx, s.at("shapes/shapes.go"), protocol.Place{Line: 28, Symbol: "Total"}))(t)
	all := must(s.sup.CallHierarchy(s.ctx, answer.OpIncomingCalls, s.at("shapes/shapes.go"), protocol.Place{Line: 28, Symbol: "Total"}))(t)
	want := answer.MaxCallSites + 6 // and main.go's
	if capped.Total != want || len(capped.Sites) != answer.MaxCallSites || capped.Declared != nil {
		t.Errorf("IncomingCalls: total %d, %d sites, declared %v; want %d, %d, nil", capped.Total, len(capped.Sites), capped.Declared, want, answer.MaxCallSites)
	}
	if all.Total != want || len(all.Sites) != want {
		t.Fatalf("CallHierarchy: total %d, %d sites; want %d of each", all.Total, len(all.Sites), want)
	}
	if siteKeys(&answer.Calls{Sites: all.Sites[:answer.MaxCallSites]}) != siteKeys(capped) {
		t.Error("CallHierarchy's first sites differ from IncomingCalls'")
	}
	if last := all.Sites[want-1].Site; last.Path != "more.go" || last.Line != 6+answer.MaxCallSites+4 || last.Column != 9 {
		t.Errorf("last site %+v, want more.go:%d:9", last, 6+answer.MaxCallSites+4)
	}
	d := all.Declared
	if d == nil || d.Name != "Total" || locKey(d.Site) != "shapes/shapes.go:28:6: func Total(shapes []Shape) float64 {" {
		t.Errorf("declared: %+v", d)
	}
	if _, err := s.sup.CallHierarchy(s.ctx, "callers", s.at("shapes/shapes.go"), protocol.Place{Line: 28, Symbol: "Total"}); err == nil {
		t.Error("an unknown operation was accepted")
	}
}

// RootAtTop serves a tree with no root marker from the supervisor's root,
// and Observe sees the server's notifications.
func TestRootAtTop(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []Notification
	observe := func(n Notification) {
		mu.Lock()
		seen = append(seen, n)
		mu.Unlock()
	}
	s := newSession(t, "python", "pyright-langserver", Config{})
	if err := os.Remove(s.path("pyproject.toml")); err != nil {
		t.Fatal(err)
	}
	var ue *UnavailableError
	if _, err := s.sup.Definition(s.ctx, s.at("main.py"), protocol.Place{Line: 4, Symbol: "total"}); !errors.As(err, &ue) {
		t.Fatalf("without a marker: %v, want an UnavailableError", err)
	}

	servers := langserver.Table()
	for i := range servers {
		servers[i].RootAtTop = servers[i].ID == "pyright"
	}
	sup := NewSupervisor(s.root, Config{Servers: servers, Observe: observe})
	t.Cleanup(func() { sup.Close() })
	got := must(sup.Definition(s.ctx, loc(t, sup, s.path("main.py")), protocol.Place{Line: 4, Symbol: "total"}))(t)
	expectContains(t, "definition", locKeys(got), "geometry.py:")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("Observe saw no notification")
	}
	for _, n := range seen {
		if n.Server != "pyright" || n.Root != s.root || n.Method == "" {
			t.Errorf("notification %+v: want server pyright, root %s, a method", n, s.root)
		}
	}
}

// Stderr receives a copy of the server's standard error (clangd logs
// there), which the server's own tail keeps too.
func TestServerStderr(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf bytes.Buffer
	servers := langserver.Table()
	for i := range servers {
		if servers[i].ID == "clangd" {
			servers[i].Command = []string{"clangd", "--log=info"}
		}
	}
	s := newSession(t, "c", "clangd", Config{Servers: servers, Stderr: lockedWriter{&mu, &buf}})
	must(s.sup.Hover(s.ctx, s.at("main.c"), protocol.Place{Line: firstLine(t, s.read("main.c"), "area"), Symbol: "area"}))(t)
	mu.Lock()
	defer mu.Unlock()
	expectContains(t, "stderr", buf.String(), "clangd")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// firstLine is the 1-based number of the first line of text holding word.
func firstLine(t testing.TB, text, word string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			return i + 1
		}
	}
	t.Fatalf("no %q in the text", word)
	return 0
}

// clangd 14 announces a call hierarchy but answers outgoingCalls with
// "method not found": the error says which server lacks it and what
// answers instead, and incoming calls still work.
func TestOutgoingCallsWhereTheServerLacksThem(t *testing.T) {
	t.Parallel()
	s := newSession(t, "c", "clangd", Config{})
	in := must(s.sup.IncomingCalls(s.ctx, s.at("geometry.c"), protocol.Place{Line: 3, Symbol: "area"}))(t)
	if in.Total != 1 || in.Sites[0].Site.Path != "main.c" {
		t.Errorf("incoming calls of area: %+v", in)
	}
	_, err := s.sup.OutgoingCalls(s.ctx, s.at("main.c"), protocol.Place{Line: 3, Symbol: "main"})
	if err == nil {
		t.Log("this clangd answers outgoing calls; nothing to check")
		return
	}
	expectErr(t, "outgoing calls", err, ErrNoCallHierarchy, "clangd", "does not answer outgoing_calls", "incoming_calls works", `code_graph with operation "callees"`)
	if !strings.HasPrefix(err.Error(), "clangd (") {
		t.Errorf("the error does not start with the server and its version: %v", err)
	}
	// Known now: asked again, it is refused without asking the server.
	_, err = s.sup.OutgoingCalls(s.ctx, s.at("main.c"), protocol.Place{Line: 3, Symbol: "main"})
	expectErr(t, "outgoing calls again", err, ErrNoCallHierarchy, "does not answer outgoing_calls")
}
