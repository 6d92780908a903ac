package evaltool_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// quotedArg is an argument name as eval's texts quote one: `name` or
// `name: value`.
var quotedArg = regexp.MustCompile("`([a-z_]+)(?::[^`]*)?`")

// Issue 19 §2/§3 guard, for eval: every argument name its description,
// hints and error texts quote is an argument of its schema. The texts are
// the ones eval gives: its description, each argument error, and the
// driver's hint after a %pip reinstall of a compiled extension.
func TestTextsNameOnlyItsArguments(t *testing.T) {
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(evaltool.EvalTool.InputSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	r := newRun(t, eval.Config{})
	texts := []string{evaltool.EvalTool.Description}
	for _, args := range []map[string]any{
		{"code": "1", "description": "too short"},
		{"code": "1", "description": "a cell in a language eval lacks", "language": "ruby"},
		{"code": "  ", "description": "a cell that holds no code"},
		{"description": "a cell without any code at all"},
	} {
		b, _ := json.Marshal(args)
		res, err := r.Call(context.Background(), tiers.Normal, "eval", b)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Fatalf("%s: not an error: %s", b, registry.ResultText(res))
		}
		texts = append(texts, registry.ResultText(res))
	}
	driver, err := os.ReadFile("../kernels/python.py")
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, regexp.MustCompile(`note: .*reset.*`).FindString(string(driver)))
	found := 0
	for _, text := range texts {
		for _, m := range quotedArg.FindAllStringSubmatch(text, -1) {
			found++
			if _, ok := schema.Properties[m[1]]; !ok {
				t.Errorf("%q names %q, which is not an argument of eval (%v):\n%s", m[0], m[1], keys(schema.Properties), text)
			}
		}
	}
	if found < 5 {
		t.Fatalf("only %d argument names quoted in eval's texts; the guard sees nothing:\n%q", found, texts)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
