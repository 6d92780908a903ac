package debugtool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// nulls lists the paths in a result's JSON that hold null: the schema
// declares every list an array and every record an object, so a strict
// client (one that checks structuredContent against outputSchema) throws
// away a result with one.
func nulls(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			out = append(out, path)
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", doc)
	return out
}

// Issue 26: `breakpoints` answered "breakpoints": null once no line
// breakpoint was left (a clear, a call setting only function breakpoints),
// and a strict client dropped the result. Every list is [] when empty:
// here the results of breakpoints, status and adapters without a session,
// and of a session's scopes, threads, stack and variables.
func TestNoNullInResults(t *testing.T) {
	py := "app.py"
	r, _ := debugRun(t, map[string]string{"requirements.txt": "", py: "def f(n):\n    return n\n\n\nprint(f(2))\n"}, dap.Config{})
	check := func(op string, args map[string]any) {
		t.Helper()
		text, isErr, out := dbg(t, r, op, args)
		if isErr {
			t.Fatalf("%s %v: %s", op, args, text)
		}
		if n := nulls(t, out); len(n) > 0 {
			b, _ := json.Marshal(out)
			t.Errorf("%s %v: null at %s in %s", op, args, strings.Join(n, ", "), b)
		}
	}
	check("breakpoints", map[string]any{"file": py, "lines": []int{2}})
	check("breakpoints", map[string]any{"file": py, "lines": []int{}})
	check("breakpoints", map[string]any{"functions": []string{"f"}})
	check("breakpoints", map[string]any{"functions": []string{}})
	check("status", nil)
	check("adapters", nil)

	testenv.LookPath(t, "python3")
	check("breakpoints", map[string]any{"file": py, "lines": []int{2}})
	check("launch", map[string]any{"program": py, "exceptions": []string{}, "timeout_seconds": 60})
	_, _, out := dbg(t, r, "stack", nil)
	if out.Stack == nil || len(out.Stack.Frames) == 0 {
		t.Fatalf("stack: %+v", out.Stack)
	}
	frame := out.Stack.Frames[0].ID
	check("stack", nil)
	check("threads", nil)
	check("scopes", map[string]any{"frame_id": frame})
	check("breakpoints", map[string]any{"file": py, "lines": []int{}})
	check("status", nil)
	check("continue", map[string]any{"timeout_seconds": 60})
	check("output", nil)
	check("terminate", nil)
}
