package structural_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/asktest"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Under write=ask a structural rewrite is asked about once, when resolve
// accepts it, with the staged diff on the card; staging and discarding
// are not asked about.
func TestRewriteAskedOnceAtAccept(t *testing.T) {
	port := asktest.New("Allow")
	r := newRun(t, map[string]string{"a.go": "package a\n\nfunc f() { println(1) }\n"},
		builtintools.Options{Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	stage := func() string {
		out, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "println($A)", "rewrite": "print($A)", "language": "go"})
		if isErr {
			t.Fatalf("ast_edit: %s", out)
		}
		return regexp.MustCompile(`edit_[0-9]+`).FindString(out)
	}
	id := stage()
	if out, isErr := runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "discard"}); isErr {
		t.Fatalf("discard: %s", out)
	}
	id = stage()
	if out, isErr := runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "accept"}); isErr {
		t.Fatalf("accept: %s", out)
	}
	if len(port.Cards()) != 1 || !strings.Contains(port.Cards()[0], "Allow resolve") || !strings.Contains(port.Cards()[0], "1 replacements of `println($A)` by `print($A)` in 1 files (a.go)") ||
		!strings.Contains(port.Cards()[0], "+func f() { print(1) }") {
		t.Fatalf("asked %d times: %q", len(port.Cards()), port.Cards())
	}
}

// Under write=ask, resolve's card shows the staged edit's diagnostics
// preview beside its diff (PRE-2): the operator sees what accepting breaks.
func TestAcceptCardShowsPreview(t *testing.T) {
	testenv.LookPath(t, "gopls")
	port := asktest.New("Allow")
	root := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module example.com/a\n\ngo 1.22\n", "a.go": "package a\n\nfunc f() int { return g(1) }\n\nfunc g(x int) int { return x }\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// With the language servers, which newRun leaves out.
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	out, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "g(1)", "rewrite": "g(1, 2)", "language": "go"})
	if isErr || !strings.Contains(out, "the change would introduce 1 error") {
		t.Fatalf("ast_edit: %s", out)
	}
	id := regexp.MustCompile(`edit_[0-9]+`).FindString(out)
	if out, isErr := runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "accept"}); isErr || !strings.Contains(out, "matches its diagnostics preview") {
		t.Fatalf("accept: %s", out)
	}
	if len(port.Cards()) != 1 || !strings.Contains(port.Cards()[0], "+func f() int { return g(1, 2) }") ||
		!strings.Contains(port.Cards()[0], "diagnostics preview (gopls): the change would introduce 1 error") {
		t.Fatalf("cards: %q", port.Cards())
	}
}
