package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
			protocol.CommandOf(a)
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
