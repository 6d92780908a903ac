package builtintools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// A harness links the library: it creates a run over the agent's checkout,
// attaches a way to ask its operator, and talks to the run's MCP server
// through mcp-go's in-process client — one peer per mode.
func Example_harness() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "checkout")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("buy milk\n"), 0o644)

	// The harness shows questions in its own UI; here it approves everything.
	operator := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		fmt.Println("operator sees:", q.Question)
		return askuser.Answer{Outcome: askuser.Answered, Choices: []string{"Allow"}}, nil
	})
	run, err := builtintools.NewRun(builtintools.Options{
		Root:   root,
		Ask:    operator,
		Policy: registry.Policy{tiers.Write: registry.Ask},
	})
	if err != nil {
		panic(err)
	}
	defer run.Close() // stops every process the run started

	// A plan-mode subagent sees read tools only.
	planner, _ := run.Client(ctx, tiers.Plan)
	defer planner.Close()
	list, _ := planner.ListTools(ctx, mcp.ListToolsRequest{})
	for _, t := range list.Tools {
		fmt.Println("plan mode sees:", t.Name)
	}

	// The main agent edits; the approval gate asks the operator first.
	agent, _ := run.Client(ctx, tiers.Normal)
	defer agent.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "edit"
	req.Params.Arguments = map[string]any{"path": "notes.txt", "old_string": "milk", "new_string": "oat milk"}
	res, _ := agent.CallTool(ctx, req)
	fmt.Println(registry.ResultText(res))
	// Output:
	// plan mode sees: ask_user
	// plan mode sees: ast_grep
	// plan mode sees: code_graph
	// plan mode sees: lsp
	// plan mode sees: read
	// operator sees: Allow edit notes.txt? (a write tool)
	// edited notes.txt: replaced 1 occurrence (first at line 1)
	//      1	buy oat milk
	// Not checked for diagnostics: notes.txt (no language server handles .txt files)
}
