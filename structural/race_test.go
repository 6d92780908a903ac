package structural_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// D1: an edit landing between resolve's staleness check and its write must
// not be overwritten. Either resolve is rejected as stale (the edit came
// first) or the edit applies on top of the accepted rewrite; the edit's
// change is on disk in every trial.
func TestResolveDoesNotOverwriteAParallelEdit(t *testing.T) {
	const src = "package p\n\n// marker\nfunc f() { foo(1) }\n"
	r := newRun(t, map[string]string{"p/a.go": src}, builtintools.Options{})
	path := filepath.Join(r.Root(), "p", "a.go")
	for trial := 0; trial < 200; trial++ {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		text, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "foo($A)", "rewrite": "bar($A)", "language": "go"})
		if isErr {
			t.Fatalf("ast_edit: %s", text)
		}
		id := ""
		if i := strings.Index(text, `edit_id "`); i >= 0 {
			id = strings.SplitN(text[i+len(`edit_id "`):], `"`, 2)[0]
		}
		resolved, edited := callPair(r, "resolve", map[string]any{"edit_id": id, "action": "accept"},
			"edit", map[string]any{"path": "p/a.go", "old_string": "// marker", "new_string": fmt.Sprintf("// edited %d", trial)})
		if edited.isErr {
			t.Fatalf("trial %d: edit failed: %s", trial, edited.text)
		}
		data, _ := os.ReadFile(path)
		got := string(data)
		if !strings.Contains(got, fmt.Sprintf("// edited %d", trial)) {
			t.Fatalf("trial %d: the edit reported success but resolve overwrote it (resolve: %s)\n%s", trial, resolved.text, got)
		}
		if !resolved.isErr && !strings.Contains(got, "bar(1)") {
			t.Fatalf("trial %d: resolve reported %q but the rewrite is not on disk:\n%s", trial, resolved.text, got)
		}
	}
}

func callAny(r *registry.Run, tool string, args map[string]any) (string, bool) {
	b, _ := json.Marshal(args)
	res, err := r.Call(context.Background(), tiers.Normal, tool, b)
	if err != nil {
		return err.Error(), true
	}
	return registry.ResultText(res), res.IsError
}

// answer is one call's text and whether it failed.
type answer struct {
	text  string
	isErr bool
}

// callPair makes two calls on r at once and returns what each answered.
func callPair(r *registry.Run, tool1 string, args1 map[string]any, tool2 string, args2 map[string]any) (first, second answer) {
	var wg sync.WaitGroup
	wg.Go(func() { first.text, first.isErr = callAny(r, tool1, args1) })
	wg.Go(func() { second.text, second.isErr = callAny(r, tool2, args2) })
	wg.Wait()
	return first, second
}

// D4: a staged edit whose folder is replaced by a link before accept is
// refused, whether the link leads out of the root (to a copy of the
// folder) or to another folder inside it; nothing is written anywhere.
func TestResolveRefusesAFolderSwappedForALink(t *testing.T) {
	for _, target := range []string{"../outside/pkg", "pkg2"} {
		t.Run(target, func(t *testing.T) {
			files := map[string]string{"pkg/a.go": "package pkg\n\nfunc f() { foo(1) }\n", "pkg/b.go": "package pkg\n\nfunc g() { foo(2) }\n"}
			r := newRun(t, files, builtintools.Options{})
			root := r.Root()
			text, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "foo($A)", "rewrite": "bar($A)", "language": "go"})
			if isErr {
				t.Fatal(text)
			}
			copyTo := filepath.Join(root, filepath.FromSlash(target))
			if err := os.MkdirAll(copyTo, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(copyTo, filepath.Base(name)), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.RemoveAll(filepath.Join(root, "pkg")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(root, "pkg")); err != nil {
				t.Fatal(err)
			}
			text, isErr = runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
			if !isErr || !strings.Contains(text, "nothing was written") {
				t.Fatalf("resolve after the swap: %s", text)
			}
			for name, content := range files {
				if data, _ := os.ReadFile(filepath.Join(copyTo, filepath.Base(name))); string(data) != content {
					t.Errorf("%s was written through the link:\n%s", name, data)
				}
			}
		})
	}
}
