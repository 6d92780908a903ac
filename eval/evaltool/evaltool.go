// Package evaltool puts package eval on a run's tool surface: the `eval`
// tool (exec), a persistent Python cell per call whose tool() calls run as
// children of the eval call, through the run's one call path.
package evaltool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Key is the kernel host's resource key.
var Key = registry.NewKey[*eval.Host]("eval")

// Family is the eval tool; its setting is an eval.Config.
var Family = registry.Family[*eval.Host]{
	Key: Key,
	Doc: "eval: a persistent Python interpreter whose cells can call the run's tools",
	Open: func(env *registry.Env) (*eval.Host, error) {
		cfg, err := registry.Setting[eval.Config](env, Key.Name())
		if err != nil {
			return nil, err
		}
		return eval.NewHost(env.Root, cfg), nil
	},
	Tools: []registry.Descriptor{EvalTool},
}

type evalParams struct {
	Code        string `json:"code" jsonschema:"the cell: Python statements; the last expression's value is shown"`
	Description string `json:"description" jsonschema:"what the cell does, 5 to 10 words, for the transcript"`
	Language    string `json:"language,omitempty" jsonschema:"python (the default) or javascript (node, one persistent context; top-level await; static imports work)" enum:"python,javascript"`
	Reset       bool   `json:"reset,omitempty" jsonschema:"discard the interpreter's state first"`
}

// EvalTool is the `eval` tool (EV-1, EV-2, EV-4, EV-5).
var EvalTool = registry.Descriptor{
	Name:  "eval",
	Title: "run code",
	Tier:  tiers.Exec,
	Description: "Run a Python (or, with language javascript, a Node) cell in a persistent interpreter: variables, imports and loaded data stay for the next cell (reset discards them). " +
		"The last expression is shown as in a notebook; display(obj) shows one mid-cell; pandas DataFrames come back as compact tables and " +
		"matplotlib figures as images. IPython habits work: !cmd, x = !cmd, %cd, %env, %time, %timeit, %%timeit, %%bash, %pip install. tool(name, args) calls this run's tools (tool(\"read\", {\"path\": \"go.mod\"})) under the same " +
		"rules as your own calls, and raises ToolError when one fails. A cell is interrupted after 5 minutes without output " +
		"(tool calls do not count) or 60 minutes in all; the result says whether the interpreter's state survived.",
	Serial:  true,
	Asks:    true, // its tool() calls may need approval
	Handler: registry.With(Key, run),
}

// EvalResult is what a cell did.
type EvalResult struct {
	*eval.CellResult
	// Spilled names the file holding the whole output when it was over the
	// output budget.
	Spilled string `json:"spilled,omitempty"`
	text    string
	images  [][]byte
}

// Text is what the agent reads.
func (r EvalResult) Text() string { return r.text }

// MoreContent returns the figures as PNG images.
func (r EvalResult) MoreContent() []mcp.Content {
	var out []mcp.Content
	for _, png := range r.images {
		out = append(out, mcp.NewImageContent(base64.StdEncoding.EncodeToString(png), "image/png"))
	}
	return out
}

func run(ctx context.Context, c *registry.Call, host *eval.Host, p evalParams) (EvalResult, error) {
	if n := len(strings.Fields(p.Description)); n < 5 || n > 10 {
		return EvalResult{}, fmt.Errorf("description has %d words; give 5 to 10 saying what the cell does (it labels the cell in the transcript)", n)
	}
	if p.Language != "" && p.Language != "python" && p.Language != "javascript" {
		return EvalResult{}, fmt.Errorf("language %q is not available; eval runs python or javascript", p.Language)
	}
	if strings.TrimSpace(p.Code) == "" {
		return EvalResult{}, errors.New("code is empty")
	}
	bridge := func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		res := c.Call(ctx, "an eval cell", name, args)
		if res.IsError {
			return nil, errors.New(registry.ResultText(res))
		}
		if res.StructuredContent != nil {
			return res.StructuredContent, nil
		}
		return registry.ResultText(res), nil
	}
	res, err := host.Run(ctx, p.Language, p.Code, p.Reset, bridge)
	if err != nil {
		return EvalResult{}, err
	}
	out := EvalResult{CellResult: res, images: res.Images}
	budget := c.Budget() - 800
	if utf8.RuneCountInString(res.Output) > budget {
		if path, err := host.Spill(res.Cell, res.Output); err == nil {
			out.Spilled = path
		}
		head := textcut.Runes(res.Output, budget*2/3)
		runes := []rune(res.Output)
		tail := string(runes[len(runes)-budget/3:])
		out.CellResult.Output = head + fmt.Sprintf("\n[… %d characters cut; the whole output is in %s]\n", len(runes)-len([]rune(head))-len([]rune(tail)), out.Spilled) + tail
	}
	out.text = format(out)
	return out, nil
}

func format(r EvalResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[cell %d · kernel state: %s · %d ms]\n", r.Cell, r.State, r.DurationMS)
	if r.Output != "" {
		b.WriteString(strings.TrimRight(r.Output, "\n") + "\n")
	}
	if r.Result != "" {
		b.WriteString(textcut.Ellipsis(r.Result, 4000) + "\n")
	}
	if r.Error != "" {
		b.WriteString(r.Error + "\n")
	}
	if r.Interrupted != "" {
		b.WriteString("Interrupted: " + r.Interrupted + ".\n")
	}
	if r.ImageN > 0 {
		fmt.Fprintf(&b, "%s returned as images.\n", textcut.Count(r.ImageN, "figure", "figures"))
	}
	if len(r.ToolCalls) > 0 {
		var parts []string
		for _, tc := range r.ToolCalls {
			s := fmt.Sprintf("%s %d ms ok", tc.Name, tc.MS)
			if !tc.OK {
				s = fmt.Sprintf("%s %d ms error", tc.Name, tc.MS)
			}
			parts = append(parts, s)
		}
		b.WriteString("tool calls: " + strings.Join(parts, "; ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
