package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// A hostile server is played by testdata/fakelsp.py, since no real server
// sends an edit that deletes a README or reaches outside the root: these
// tests are of what this client does with such edits.

// hostileSession opens a Supervisor whose one server, for .fake files, is
// fakelsp.py playing the script s.play writes; the root holds fake.toml
// and files.
func hostileSession(t *testing.T, files map[string]string, cfg Config, tune ...func(*langserver.Spec)) *hostile {
	t.Helper()
	testenv.LookPath(t, "python3")
	fake, err := filepath.Abs(filepath.Join("testdata", "fakelsp.py"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	files["fake.toml"] = ""
	spec := langserver.Spec{ID: "fake", Language: "Fake", Command: []string{"python3", fake, script},
		Install: "it is the test's", RootMarkers: []string{"fake.toml"}, Extensions: map[string]string{".fake": "fake"}}
	for _, f := range tune {
		f(&spec)
	}
	cfg.Servers = []langserver.Spec{spec}
	s := inlineSession(t, "python3", files, cfg)
	return &hostile{session: s, script: script}
}

type hostile struct {
	*session
	script string
}

// play writes the script the server plays (before its first use).
func (h *hostile) play(script map[string]any) {
	h.t.Helper()
	data, err := json.Marshal(script)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.script, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// uri is rel's file URI under the root.
func (h *hostile) uri(rel string) string { return protocol.FileURI(h.path(rel)) }

// insert is a text edit putting text at the start of the file.
func insert(text string) map[string]any {
	return map[string]any{"range": map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}}, "newText": text}
}

// offer makes the server offer one code action at any place.
func offer(action map[string]any) map[string]any {
	return map[string]any{"textDocument/codeAction": []any{action}}
}

// R8 (a): an edit that would make a file larger than 16 MiB is refused
// before anything is written, by lsp_fix and by lsp_rename alike.
func TestHostileEditOverSizeLimit(t *testing.T) {
	t.Parallel()
	// Reading a 20 MiB answer under -race on a loaded machine can take
	// longer than the default bound; this test is of the size limit.
	h := hostileSession(t, map[string]string{"a.fake": "hello world\n"}, Config{RequestTimeout: 3 * time.Minute})
	big := strings.Repeat("x", 20<<20)
	edit := map[string]any{"changes": map[string]any{h.uri("a.fake"): []any{insert(big)}}}
	h.play(map[string]any{"answers": map[string]any{
		"textDocument/codeAction": []any{map[string]any{"title": "Format document", "kind": "source", "edit": edit}},
		"textDocument/rename":     edit,
	}})
	_, err := h.applyTitled("a.fake", protocol.Place{Line: 1, Symbol: "hello"}, "Format document")
	expectErr(t, "a 20 MiB edit", err, nil, "a.fake", "16 MiB", "no file changed")
	if got := h.read("a.fake"); got != "hello world\n" {
		t.Errorf("a.fake was written: %d bytes", len(got))
	}
	_, err = h.sup.Rename(h.ctx, h.at("a.fake"), protocol.Place{Line: 1, Symbol: "hello"}, "bye", false)
	expectErr(t, "a 20 MiB rename", err, nil, "a.fake", "16 MiB", "no file changed")
	if got := h.read("a.fake"); got != "hello world\n" {
		t.Errorf("a.fake was written by the rename: %d bytes", len(got))
	}
}

// R8 (b): a command whose first edit is written and whose second is
// refused (it reaches outside the root): the error says what was written.
func TestHostileCommandSecondEditRefused(t *testing.T) {
	t.Parallel()
	h := hostileSession(t, map[string]string{"a.fake": "hello world\n"}, Config{ApplyEditWait: time.Second})
	outside := filepath.Join(t.TempDir(), "victim.fake")
	os.WriteFile(outside, []byte("outside\n"), 0o644)
	h.play(map[string]any{
		"answers": offer(map[string]any{"title": "Fix it", "kind": "quickfix", "command": map[string]any{"title": "Fix it", "command": "atk.cmd"}}),
		"commands": map[string]any{"atk.cmd": []any{
			map[string]any{"edit": map[string]any{"changes": map[string]any{h.uri("a.fake"): []any{insert("first\n")}}}},
			map[string]any{"edit": map[string]any{"changes": map[string]any{protocol.FileURI(outside): []any{insert("second\n")}}}},
		}},
	})
	res, err := h.applyTitled("a.fake", protocol.Place{Line: 1, Symbol: "hello"}, "Fix it")
	expectErr(t, "the second edit", err, nil, "outside the root", "not applied")
	if got := h.read("a.fake"); got != "first\nhello world\n" {
		t.Fatalf("a.fake: %q", got)
	}
	// What was written is in the result and in the error's words.
	if res == nil || len(res.Files) != 1 || res.Files[0].Path != "a.fake" || res.Files[0].Edits != 1 {
		t.Errorf("the result does not name the file written: %+v", res)
	}
	expectErr(t, "the second edit", err, nil, "a.fake (1 edit) was written")
	if data, _ := os.ReadFile(outside); string(data) != "outside\n" {
		t.Errorf("the outside file was written: %q", data)
	}
}

// R8 (c): a rename of a file onto itself, overwrite set, is a no-op that
// says so; it deleted the file.
func TestHostileRenameOntoItself(t *testing.T) {
	t.Parallel()
	h := hostileSession(t, map[string]string{"a.fake": "hello world\n", "README": "read me\n"}, Config{})
	self := map[string]any{"documentChanges": []any{map[string]any{"kind": "rename", "oldUri": h.uri("README"), "newUri": h.uri("README"), "options": map[string]any{"overwrite": true}}}}
	h.play(map[string]any{"answers": map[string]any{
		"textDocument/codeAction": []any{map[string]any{"title": "Tidy", "kind": "source", "edit": self}},
		"textDocument/rename":     self,
	}})
	res := must(h.applyTitled("a.fake", protocol.Place{Line: 1, Symbol: "hello"}, "Tidy"))(t)
	if got, err := os.ReadFile(h.path("README")); err != nil || string(got) != "read me\n" {
		t.Fatalf("README after a rename onto itself: %q, %v", got, err)
	}
	if !res.Unchanged || len(res.Files) != 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "renames README onto itself") {
		t.Errorf("the result does not say the rename was a no-op: %+v", res)
	}
	ren := must(h.sup.Rename(h.ctx, h.at("a.fake"), protocol.Place{Line: 1, Symbol: "hello"}, "bye", false))(t)
	if got, err := os.ReadFile(h.path("README")); err != nil || string(got) != "read me\n" {
		t.Fatalf("README after lsp_rename's rename onto itself: %q, %v", got, err)
	}
	if len(ren.Files) != 0 || !strings.Contains(strings.Join(ren.Notes, "\n"), "renames README onto itself") {
		t.Errorf("the rename result does not say so: %+v", ren)
	}
	_ = context.Background
}
