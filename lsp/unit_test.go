package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/wsedit"
)

func edit(l1, c1, l2, c2 int, text string) protocol.TextEdit {
	return protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}, NewText: text}
}

func TestPlanAndCommitFileOperations(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(root, name))
		return string(data), err == nil
	}
	write("a.txt", "alpha old\n")
	write("d.txt", "doomed\n")
	write("e.txt", "edited via changes\n")
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	uri := func(name string) string { return protocol.FileURI(filepath.Join(root, name)) }
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	we := &protocol.WorkspaceEdit{
		Changes: map[string][]protocol.TextEdit{uri("e.txt"): {edit(0, 0, 0, 6, "changed")}},
		DocumentChanges: []json.RawMessage{
			raw(map[string]any{"textDocument": map[string]any{"uri": uri("a.txt"), "version": nil}, "edits": []protocol.TextEdit{edit(0, 6, 0, 9, "new")}}),
			raw(map[string]any{"kind": "rename", "oldUri": uri("a.txt"), "newUri": uri("b.txt")}),
			raw(map[string]any{"kind": "create", "uri": uri("sub/c.txt")}),
			raw(map[string]any{"textDocument": map[string]any{"uri": uri("sub/c.txt"), "version": nil}, "edits": []protocol.TextEdit{edit(0, 0, 0, 0, "made\n")}}),
			raw(map[string]any{"kind": "delete", "uri": uri("d.txt")}),
		},
	}
	plan, err := planEdit(sup.co, we, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wsedit.Commit(context.Background(), sup.co, plan, false); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"b.txt": "alpha new\n", "sub/c.txt": "made\n", "e.txt": "changed via changes\n"} {
		if got, ok := read(name); !ok || got != want {
			t.Errorf("%s = %q (exists %v), want %q", name, got, ok, want)
		}
	}
	for _, gone := range []string{"a.txt", "d.txt"} {
		if _, ok := read(gone); ok {
			t.Errorf("%s still exists", gone)
		}
	}

	// An edit reaching outside the root refuses the whole edit.
	outside := filepath.Join(t.TempDir(), "x.txt")
	write("keep.txt", "keep\n")
	we = &protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{
		uri("keep.txt"):           {edit(0, 0, 0, 4, "lost")},
		protocol.FileURI(outside): {edit(0, 0, 0, 0, "x")},
	}}
	if _, err := planEdit(sup.co, we, nil); err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Fatalf("edit outside the root: %v", err)
	}
	// Overlapping edits in one file refuse the whole edit too.
	we = &protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{
		uri("b.txt"):    {edit(0, 0, 0, 0, "ok ")},
		uri("keep.txt"): {edit(0, 0, 0, 3, "x"), edit(0, 1, 0, 2, "y")},
	}}
	if _, err := planEdit(sup.co, we, nil); err == nil || !strings.Contains(err.Error(), "overlapping") {
		t.Fatalf("overlapping edits: %v", err)
	}
	// A file changed on disk between planning and commit: nothing written.
	we = &protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{
		uri("b.txt"):    {edit(0, 0, 0, 0, "ok ")},
		uri("keep.txt"): {edit(0, 0, 0, 4, "lost")},
	}}
	plan, err = planEdit(sup.co, we, nil)
	if err != nil {
		t.Fatal(err)
	}
	write("keep.txt", "someone else\n")
	if _, err := wsedit.Commit(context.Background(), sup.co, plan, false); err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("concurrent change: %v", err)
	}
	if got, _ := read("b.txt"); got != "alpha new\n" {
		t.Errorf("b.txt was written although the edit was refused: %q", got)
	}
}

func TestDecodeLocationsAndHover(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{
		{`null`, 0},
		{`{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, 1},
		{`[{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}},{"targetUri":"file:///b","targetRange":{"start":{"line":0,"character":0},"end":{"line":5,"character":0}},"targetSelectionRange":{"start":{"line":2,"character":4},"end":{"line":2,"character":5}}}]`, 2},
	} {
		locs := decodeLocations(json.RawMessage(c.raw))
		if len(locs) != c.want {
			t.Errorf("%s: got %d locations", c.raw, len(locs))
		}
		if c.want == 2 && (locs[1].URI != "file:///b" || locs[1].Range.Start.Line != 2) {
			t.Errorf("link: want the selection range of the target, got %+v", locs[1])
		}
	}
	for raw, want := range map[string]string{
		`{"kind":"markdown","value":"**x**"}`: "**x**",
		`"plain"`:                             "plain",
		`[{"language":"go","value":"func f()"},"doc"]`: "```go\nfunc f()\n```\n\ndoc",
	} {
		if got := hoverText(json.RawMessage(raw)); got != want {
			t.Errorf("hover %s: got %q want %q", raw, got, want)
		}
	}
}

func TestURIRoundTrip(t *testing.T) {
	for _, p := range []string{"/tmp/a b/c#d.go", "/tmp/größe/x.go", "/tmp/%41.go"} {
		got, ok := protocol.URIPath(protocol.FileURI(p))
		if !ok || got != p {
			t.Errorf("%s -> %s -> %s", p, protocol.FileURI(p), got)
		}
	}
}

// The marker scan walks as every tool does: a root marker inside a folder
// .gitignore leaves out, or in vendored code, names no server root.
func TestMarkerScanUsesTheWalkPolicy(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		".gitignore":          "generated/\n",
		"app/go.mod":          "module app\n",
		"generated/x/go.mod":  "module x\n",
		"vendor/dep/go.mod":   "module dep\n",
		"tools/deep/a/go.mod": "module a\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	got := sup.co.ScanMarkers(context.Background(), sup.cfg.Servers)["gopls"]
	if !slices.Equal(got, []string{"app", "tools/deep/a"}) {
		t.Fatalf("gopls marker folders %v, want app and tools/deep/a", got)
	}
}

// Issue 19 §3: every path a result names is relative to the root —
// pyright's checker output, a server's message — and one outside it stays
// as it is.
func TestRelText(t *testing.T) {
	root := t.TempDir()
	s := NewSupervisor(root, Config{})
	defer s.Close()
	for in, want := range map[string]string{
		root + "/main.py:3:26 - error: x":                             "main.py:3:26 - error: x",
		"  " + root + "/pkg/a.py:1:1 - error":                         "  pkg/a.py:1:1 - error",
		"file of " + protocol.FileURI(root) + "/src/a.ts (the index)": "file of src/a.ts (the index)",
		"paths are relative to " + root:                               "paths are relative to " + root,
		"/elsewhere" + root + "/a.go and " + root + "2/b.go":          "/elsewhere" + root + "/a.go and " + root + "2/b.go",
		"/usr/lib/go/src/fmt/print.go and \"" + root + "/x.go\"":      "/usr/lib/go/src/fmt/print.go and \"x.go\"",
	} {
		if got := s.co.RelText(in); got != want {
			t.Errorf("RelText(%q) = %q, want %q", in, got, want)
		}
	}
	// Paths a server gives from another folder: the root's parent (gopls
	// names a file by its folder and name), or a folder of a file asked
	// about; one under the root, a missing one and a package path stay.
	for _, f := range []string{"shapes.go", "pkg/sub/s.go", "sub/x.go"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	s.co.NoteDir(filepath.Join(root, "pkg/sub/s.go"))
	base := filepath.Base(root)
	for in, want := range map[string]string{
		base + "/shapes.go:7:6: renaming this func":       "shapes.go:7:6: renaming this func",
		"sub/s.go:5:6:\tconflicts with sub/s.go:3:6":      "pkg/sub/s.go:5:6:\tconflicts with pkg/sub/s.go:3:6",
		"sub/x.go:1:1 is the root's own":                  "sub/x.go:1:1 is the root's own",
		"(see " + base + "/missing.go) and example.com/m": "(see " + base + "/missing.go) and example.com/m",
		"a/b/c" + base + "/shapes.go":                     "a/b/c" + base + "/shapes.go",
	} {
		if got := s.co.RelText(in); got != want {
			t.Errorf("RelText(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFixDecoding feeds code actions as a server might send them to the
// decoding lsp_fix does (the command of a CodeAction or a bare Command)
// and files to the indentation reader: neither may panic.
func FuzzFixDecoding(f *testing.F) {
	f.Add(`{"title":"x","command":{"command":"gopls.apply_fix","arguments":[{"fix":"a"}]}}`, "\tx\n")
	f.Add(`{"title":"x","command":"pyright.organizeimports","arguments":["file:///a.py"]}`, "  a\n    b\n")
	f.Add(`{"title":"x","command":null,"edit":{"changes":{}}}`, "")
	f.Add(`{"title":"x","command":"`, " ")
	f.Fuzz(func(t *testing.T, action, text string) {
		var a protocol.CodeActionOrCommand
		if json.Unmarshal([]byte(action), &a) == nil {
			commandOf(a)
		}
		opts := formattingOptions(text)
		if n, _ := opts["tabSize"].(int); n <= 0 {
			t.Fatalf("tab size %v for %q", opts["tabSize"], text)
		}
	})
}

// Every list a result's schema requires is [] when empty, never null: a
// status row of a server with no root markers (RootAtTop) or extensions.
func TestStatusListsAreNeverNull(t *testing.T) {
	sup := NewSupervisor(t.TempDir(), Config{Servers: []langserver.Spec{{ID: "top", Language: "Any", Command: []string{"no-such-program-here"},
		Install: "none", RootAtTop: true}}})
	defer sup.Close()
	data, err := json.Marshal(sup.Status(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "null") {
		t.Errorf("a status with null lists: %s", data)
	}
}
