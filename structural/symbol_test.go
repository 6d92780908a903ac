package structural_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/asktest"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const symGo = "package a\n\n// F says hi.\nfunc F() string {\n\treturn \"hi\"\n}\n"

// A read-only file is refused before anything is written, with the way
// out named; force writes it and keeps its mode.
func TestEditSymbolReadOnly(t *testing.T) {
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo}, builtintools.Options{})
	path := filepath.Join(r.Root(), "a.go")
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"symbol": "F", "operation": "replace_body", "new_text": `return "bye"`}
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", args)
	if !isErr || !strings.Contains(text, "a.go is read-only (mode 0444): nothing was written. Set force") {
		t.Fatalf("read-only: (error=%v) %s", isErr, text)
	}
	if data, _ := os.ReadFile(path); string(data) != symGo {
		t.Fatalf("written anyway:\n%s", data)
	}
	args["force"] = true
	text, isErr = runtest.Call(t, r, tiers.Normal, "edit_symbol", args)
	if isErr || !strings.Contains(text, "note: a.go was read-only") {
		t.Fatalf("forced: (error=%v) %s", isErr, text)
	}
	info, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "\treturn \"bye\"\n") || info.Mode().Perm() != 0o444 {
		t.Fatalf("forced write: mode %v\n%s", info.Mode(), data)
	}
}

// Under write=ask the card shows the diff of the change; a refusal
// writes nothing.
func TestEditSymbolAsksWithDiff(t *testing.T) {
	port := asktest.New("Deny")
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo},
		builtintools.Options{Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	args := map[string]any{"symbol": "F", "operation": "replace_body", "new_text": `return "bye"`}
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", args)
	if !isErr || len(port.Cards()) != 1 || !strings.Contains(text, "edit_symbol is refused") {
		t.Fatalf("denied: (error=%v) %s; cards %q", isErr, text, port.Cards())
	}
	if data, _ := os.ReadFile(filepath.Join(r.Root(), "a.go")); string(data) != symGo {
		t.Fatalf("written though denied:\n%s", data)
	}
	port.Answer("Allow")
	if text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", args); isErr {
		t.Fatalf("allowed: %s", text)
	}
	if len(port.Cards()) != 2 || !strings.Contains(port.Cards()[1], "Allow edit_symbol") || !strings.Contains(port.Cards()[1], "replace_body function a.F in a.go") ||
		!strings.Contains(port.Cards()[1], "-\treturn \"hi\"") || !strings.Contains(port.Cards()[1], "+\treturn \"bye\"") {
		t.Fatalf("cards: %q", port.Cards())
	}
}

// A file with CRLF line ends keeps them in the new text.
func TestEditSymbolCRLF(t *testing.T) {
	crlf := strings.ReplaceAll(symGo, "\n", "\r\n")
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": crlf}, builtintools.Options{})
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace_body", "new_text": "s := \"bye\"\nreturn s"})
	if isErr {
		t.Fatal(text)
	}
	data, _ := os.ReadFile(filepath.Join(r.Root(), "a.go"))
	want := "package a\r\n\r\n// F says hi.\r\nfunc F() string {\r\n\ts := \"bye\"\r\n\treturn s\r\n}\r\n"
	if string(data) != want {
		t.Fatalf("got %q\nwant %q", data, want)
	}
}

// A change made by another program after the graph indexed the file is
// seen before the edit: the definition is found where it is now.
func TestEditSymbolAfterOutsideChange(t *testing.T) {
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo}, builtintools.Options{})
	if text, isErr := runtest.Call(t, r, tiers.Plan, "code_graph", map[string]any{"operation": "outline", "file": "a.go"}); isErr {
		t.Fatal(text)
	}
	moved := "package a\n\nvar x = 1\n\n" + symGo[len("package a\n\n"):]
	if err := os.WriteFile(filepath.Join(r.Root(), "a.go"), []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace_body", "new_text": `return "bye"`})
	if isErr || !strings.Contains(text, "it is now at lines 6-8") {
		t.Fatalf("(error=%v) %s", isErr, text)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Root(), "a.go")); string(data) != strings.Replace(moved, `"hi"`, `"bye"`, 1) {
		t.Fatalf("%s", data)
	}
}

// A diff longer than the output budget is cut at a line, says how much
// it shows and how to see the rest; the structured diff is whole.
func TestEditSymbolDiffWithinBudget(t *testing.T) {
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo}, builtintools.Options{OutputBudget: 1500})
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "println(%d)\n", i)
	}
	b, _ := json.Marshal(map[string]any{"symbol": "F", "operation": "replace_body", "new_text": body.String() + `return "hi"`})
	res, err := r.Call(context.Background(), tiers.Normal, "edit_symbol", b)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, registry.ResultText(res))
	}
	text := registry.ResultText(res)
	if len(text) > 1500 || !regexp.MustCompile(`\[diff cut at \d+ of 20\d lines by the output budget; the structured result's diff is whole, and read of a.go with offset 4 shows the definition as it is now\]$`).MatchString(text) {
		t.Fatalf("%d chars:\n%s", len(text), text)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct{ Diff string }
	json.Unmarshal(raw, &out)
	if !strings.Contains(out.Diff, "+\tprintln(199)\n") {
		t.Fatalf("structured diff: %s", out.Diff)
	}
}

// A file changed while the card was open is not written: the approved
// diff is no longer the change.
func TestEditSymbolChangedWhileAsking(t *testing.T) {
	var root string
	changed := strings.Replace(symGo, "// F says hi.", "// F greets.", 1)
	port := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		if err := os.WriteFile(filepath.Join(root, "a.go"), []byte(changed), 0o644); err != nil {
			return askuser.Answer{}, err
		}
		return askuser.Answer{Outcome: askuser.Answered, Choices: []string{"Allow"}}, nil
	})
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo},
		builtintools.Options{Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	root = r.Root()
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace_body", "new_text": `return "bye"`})
	if !isErr || !strings.Contains(text, "a.go changed while the change was waiting for approval, so nothing was written") {
		t.Fatalf("(error=%v) %s", isErr, text)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.go")); string(data) != changed {
		t.Fatalf("written:\n%s", data)
	}
}

// A new_text over the bound is refused with the tool to use instead.
func TestEditSymbolTooLarge(t *testing.T) {
	r := newRun(t, map[string]string{"go.mod": "module a\n", "a.go": symGo}, builtintools.Options{})
	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace_body",
		"new_text": "return \"" + strings.Repeat("x", 2<<20) + "\""})
	if !isErr || !strings.Contains(text, "edit_symbol takes at most 1024 KiB for one definition, so nothing was written") {
		t.Fatalf("(error=%v) %.300s", isErr, text)
	}
}
