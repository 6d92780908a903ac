package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// siteKeys is every call site of r, one a line, as
// "path:line:col: text <- name (defined path:line)".
func siteKeys(r *answer.Calls) string {
	var keys []string
	for _, s := range r.Sites {
		def := fmt.Sprintf("%s:%d", s.Defined.Path, s.Defined.Line)
		if s.Defined.Outside {
			def = "outside"
		}
		keys = append(keys, fmt.Sprintf("%s <- %s %s (%s)", locKey(s.Site), s.Kind, s.Name, def))
	}
	return strings.Join(keys, "\n")
}

// The call hierarchy on a real gopls: who calls Total, what Total and
// main call (fmt.Println is outside the root: named, not quoted).
func TestCallHierarchyGopls(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	in := must(s.sup.IncomingCalls(s.ctx, s.at("shapes/shapes.go"), protocol.Place{Line: 28, Symbol: "Total"}))(t)
	if in.Operation != answer.OpIncomingCalls || in.Total != 1 || in.Functions != 1 || in.Function != "Total" || in.File != "shapes/shapes.go" {
		t.Errorf("incoming: %+v", in)
	}
	expectContains(t, "incoming", siteKeys(in), `main.go:12:32: fmt.Println("größe 🚀", shapes.Total(all)) <- function main (main.go:9)`)

	// From a call site, not the declaration: the same function.
	in2 := must(s.sup.IncomingCalls(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "shapes.Total"}))(t)
	if siteKeys(in2) != siteKeys(in) {
		t.Errorf("incoming from the call site differs:\n%s\nvs\n%s", siteKeys(in2), siteKeys(in))
	}

	out := must(s.sup.OutgoingCalls(s.ctx, s.at("shapes/shapes.go"), protocol.Place{Line: 28, Symbol: "Total"}))(t)
	expectContains(t, "outgoing", siteKeys(out), "shapes/shapes.go:31:12: sum += s.Area() <- function Area (shapes/shapes.go:8)")

	mainOut := must(s.sup.OutgoingCalls(s.ctx, s.at("main.go"), protocol.Place{Line: 9, Symbol: "main"}))(t)
	keys := siteKeys(mainOut)
	expectContains(t, "main's calls", keys,
		`main.go:12:6: fmt.Println("größe 🚀", shapes.Total(all)) <- function Println (outside)`,
		`main.go:12:32: fmt.Println("größe 🚀", shapes.Total(all)) <- function Total (shapes/shapes.go:28)`)
	for _, st := range mainOut.Sites {
		if st.Defined.Outside && (st.Defined.Text != "" || st.Detail != "") {
			t.Errorf("a callee outside the root is quoted: %+v", st)
		}
	}

	// Not a function: the server prepares nothing, and the error says what
	// to point at.
	_, err := s.sup.IncomingCalls(s.ctx, s.at("shapes/shapes.go"), protocol.Place{Line: 12, Symbol: "Square"})
	expectErr(t, "calls of an import", err, nil, "no call hierarchy", "point at the name of a function")
}

// The call hierarchy on typescript-language-server.
func TestCallHierarchyTypeScript(t *testing.T) {
	t.Parallel()
	s := newSession(t, "ts", "typescript-language-server", Config{})
	in := must(s.sup.IncomingCalls(s.ctx, s.at("src/geometry.ts"), protocol.Place{Line: 12, Symbol: "total"}))(t)
	if in.Total != 1 || in.Server != "typescript-language-server" {
		t.Errorf("incoming: %+v", in)
	}
	expectContains(t, "incoming", siteKeys(in), `src/main.ts:4:45: const label = "größe 🚀"; console.log(label, total(squares));`)
	out := must(s.sup.OutgoingCalls(s.ctx, s.at("src/geometry.ts"), protocol.Place{Line: 12, Symbol: "total"}))(t)
	expectContains(t, "outgoing", siteKeys(out), "<- method area (src/geometry.ts:6)", "squares.reduce(")
	for _, st := range out.Sites {
		if st.Name == "reduce" && !st.Defined.Outside {
			t.Errorf("Array.reduce is declared in TypeScript's lib, outside the root: %+v", st)
		}
	}
}
