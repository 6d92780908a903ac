package builtintools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// The module's families declare what their tools use of each other. Left
// out with --without, a family costs the tools that use it what they use
// it for, said at NewRun (Run.Degraded, the peers' instructions) and in the
// tool's own answer; the run still opens.
func TestFamiliesDeclareWhatTheyUse(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc Total() int { return 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(without ...string) *registry.Run {
		t.Helper()
		r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: without})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	if d := run().Degraded(); len(d) != 0 {
		t.Errorf("with every family, Degraded says %v", d)
	}
	for _, tc := range []struct {
		without, want string
	}{
		{"structural", "lsp_rename, lsp_fix: preview (the change staged for resolve, as ast_edit's rewrites) is unavailable in this run: the structural family was left out of this run"},
		{"code_graph", "lsp: after a write, the check of the other files that use what it changed (the code graph names them) is unavailable in this run: the code_graph family was left out of this run\n" +
			"edit_symbol: editing a definition found by name (edit_symbol finds it through the code graph) is unavailable in this run: the code_graph family was left out of this run"},
		{"lsp", "write, edit, apply_patch: check (the contents a call would write, checked by the language servers with nothing written) is unavailable in this run: the lsp family was left out of this run\n" +
			"ast_edit, resolve: the diagnostics preview (what accepting a staged edit would introduce and fix) is unavailable in this run: the lsp family was left out of this run\n" +
			"code_graph: confirm (candidate sites checked by a language server) is unavailable in this run: the lsp family was left out of this run"},
	} {
		var got []string
		for _, x := range run(tc.without).Degraded() {
			got = append(got, x.String())
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("without %s: Degraded %q, want %q", tc.without, got, tc.want)
		}
	}
	// The tool says why, in its own answer.
	res, err := run("structural").Call(context.Background(), tiers.Normal, "lsp_rename",
		[]byte(`{"file":"main.go","line":3,"symbol":"Total","new_name":"Sum","preview":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if text := registry.ResultText(res); !res.IsError || !strings.Contains(text, "(the structural family was left out of this run); call lsp_rename without preview") {
		t.Errorf("lsp_rename preview without structural: (error=%v) %s", res.IsError, text)
	}
}

// Catalog is every tool the module ships, once each: all a run with every
// family on (vibe mode, an ask port and a conversation for debug) registers,
// and nothing else.
func TestCatalog(t *testing.T) {
	r := everyFamilyRun(t, "catalog")
	var catalog, registered []string
	for _, d := range builtintools.Catalog() {
		catalog = append(catalog, d.Name)
	}
	for _, d := range r.Registered() {
		registered = append(registered, d.Name)
	}
	slices.Sort(catalog)
	if !slices.Equal(catalog, registered) {
		t.Errorf("Catalog %q\nregistered %q", catalog, registered)
	}
}

// everyFamilyRun is a run with every family on (vibe mode, an ask port and
// a conversation for debug) over an empty root, closed when t ends.
func everyFamilyRun(t *testing.T, conversation string) *registry.Run {
	t.Helper()
	r, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), ConversationID: conversation, Ask: askuser.Func(nil),
		Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: map[string]string{"fast": "true"}, StateDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
