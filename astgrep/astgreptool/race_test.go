package astgreptool_test

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
		text, isErr := call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "foo($A)", "rewrite": "bar($A)", "language": "go"})
		if isErr {
			t.Fatalf("ast_edit: %s", text)
		}
		id := ""
		if i := strings.Index(text, `edit_id "`); i >= 0 {
			id = strings.SplitN(text[i+len(`edit_id "`):], `"`, 2)[0]
		}
		var wg sync.WaitGroup
		var resolveText, editText string
		var resolveErr, editErr bool
		wg.Add(2)
		go func() {
			defer wg.Done()
			resolveText, resolveErr = callAny(r, "resolve", map[string]any{"edit_id": id, "action": "accept"})
		}()
		go func() {
			defer wg.Done()
			editText, editErr = callAny(r, "edit", map[string]any{"path": "p/a.go", "old_string": "// marker", "new_string": fmt.Sprintf("// edited %d", trial)})
		}()
		wg.Wait()
		if editErr {
			t.Fatalf("trial %d: edit failed: %s", trial, editText)
		}
		data, _ := os.ReadFile(path)
		got := string(data)
		if !strings.Contains(got, fmt.Sprintf("// edited %d", trial)) {
			t.Fatalf("trial %d: the edit reported success but resolve overwrote it (resolve: %s)\n%s", trial, resolveText, got)
		}
		if !resolveErr && !strings.Contains(got, "bar(1)") {
			t.Fatalf("trial %d: resolve reported %q but the rewrite is not on disk:\n%s", trial, resolveText, got)
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
