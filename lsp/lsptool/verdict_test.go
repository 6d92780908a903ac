package lsptool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// verdictReport is a result's diagnostics reports as a program reads them.
type verdictReport struct {
	Reports []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
		Data struct {
			Files []diag.Verdict `json:"files"`
		} `json:"data"`
	} `json:"reports"`
}

// callChecked calls tool and fails t unless a strict client keeps the
// result; it returns the result's text and its diagnostics verdicts.
func callChecked(t *testing.T, r *registry.Run, tool string, args map[string]any) (string, []diag.Verdict, []string) {
	t.Helper()
	text, rep := decodeCall[verdictReport](t, r, tiers.Normal, tool, args)
	var vs []diag.Verdict
	var texts []string
	for _, r := range rep.Reports {
		if r.Kind == "diagnostics" {
			vs = append(vs, r.Data.Files...)
			texts = append(texts, r.Text)
		}
	}
	return text, vs, texts
}

// decodeCall calls tool in mode and fails t unless it succeeds and a
// strict client keeps the result; it returns the result's text and its
// structuredContent decoded as T.
func decodeCall[T any](t *testing.T, r *registry.Run, mode tiers.Mode, tool string, args map[string]any) (string, T) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, mode, tool, b)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", tool, err, registry.ResultText(res))
	}
	checkStrict(t, r, tool, res)
	var out T
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v in %s", tool, err, raw)
	}
	return registry.ResultText(res), out
}

func checkStrict(t *testing.T, r *registry.Run, name string, res *mcp.CallToolResult) {
	t.Helper()
	for _, tool := range r.Visible(tiers.Normal) {
		if tool.Name == name {
			if err := toolschema.CheckResult(tool, res); err != nil {
				t.Errorf("%s: a strict client would throw this result away: %v", name, err)
			}
		}
	}
}

// Issue 31 §2: a write whose diagnostics do not come within the wait says
// so (timed_out, the version, the wait), and the diagnostics that come for
// that version afterwards are reported on the run's next result, of any
// tool, once, naming the write. Before, they were dropped.
func TestLateDiagnosticsOnNextResult(t *testing.T) {
	testenv.LookPath(t, "gopls")
	// A wait no server meets: gopls loads the module first.
	r := openRun(t, registry.Config{Root: goRoot(t), Settings: map[string]any{"lsp": lsp.Config{DiagnosticsWait: time.Millisecond}}})

	broken := strings.Replace(cartGo, "len(c.Items)", "len(c.Itemz)", 1)
	text, vs, _ := callChecked(t, r, "write", map[string]any{"path": "cart.go", "content": broken})
	if len(vs) != 1 || vs[0].File != "cart.go" || vs[0].State != diag.TimedOut || vs[0].Server != "gopls" || vs[0].Version != 1 ||
		!strings.Contains(vs[0].Why, "within 1ms") || len(vs[0].New) != 0 {
		t.Fatalf("the write's verdict: want cart.go timed out at version 1; got %+v", vs)
	}
	expectIn(t, "the write's text", text, "Not checked for diagnostics: cart.go (gopls published no diagnostics for cart.go version 1 within 1ms; what comes later is reported on the next result)")

	var late []diag.Verdict
	var lateText []string
	if !testenv.Until(time.Minute, func() bool {
		_, late, lateText = callChecked(t, r, "read", map[string]any{"path": "go.mod"})
		return len(late) > 0
	}) {
		t.Fatal("no late diagnostics on any result within a minute")
	}
	v := late[0]
	if len(late) != 1 || v.File != "cart.go" || v.State != diag.Checked || v.Version != 1 || v.After == nil ||
		v.After.File != "cart.go" || v.After.Tool != "write" || len(v.New) != 1 || v.New[0].Severity != "error" ||
		!strings.Contains(v.New[0].Message, "c.Itemz undefined") || v.New[0].Line != 7 {
		t.Fatalf("late verdict: want cart.go checked at version 1 after the write, with the new error; got %+v", late)
	}
	expectIn(t, "the late report", lateText[0], "Diagnostics that came late, after the write of cart.go ", " s ago (write)",
		"cart.go:7:", "c.Itemz undefined")

	// Delivered once.
	if _, again, _ := callChecked(t, r, "read", map[string]any{"path": "go.mod"}); len(again) != 0 {
		t.Errorf("late diagnostics delivered twice: %+v", again)
	}
}

func expectIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, text)
		}
	}
}
