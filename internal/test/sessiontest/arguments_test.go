package sessiontest

import (
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The guard catches a hint that names an argument its tool lacks (the
// issue's "raise per_depth" on a tool whose argument is limit), and lets
// pass another tool's argument named with that tool, nested arguments,
// tool names, file names and declared terms.
func TestUnknownArguments(t *testing.T) {
	tools := []mcp.Tool{
		mcp.NewTool("code_graph", mcp.WithNumber("limit"), mcp.WithString("operation")),
		mcp.NewTool("vibe_wait", mcp.WithArray("worker_ids")),
		mcp.NewTool("ask_user", mcp.WithArray("options", mcp.Items(map[string]any{"type": "object",
			"properties": map[string]any{"label": map[string]any{"type": "string"}, "long_label": map[string]any{"type": "string"}}}))),
	}
	for _, c := range []struct {
		tool, text string
		want       []string
	}{
		{"code_graph", "the count is a lower bound: raise per_depth to see more", []string{"per_depth"}},
		{"code_graph", "a narrower path, or raise limit", nil},
		{"code_graph", "vibe_wait with worker_ids [\"w1\"] returns it", nil},
		{"code_graph", "worker_ids is not mine", []string{"worker_ids"}},
		{"ask_user", "every option needs a long_label", nil},
		{"code_graph", "defined in src/my_module.py and my_helpers.go", nil},
		{"code_graph", "status timed_out", nil},
		{"code_graph", "? a card may say what_ever", nil},
	} {
		if got := UnknownArguments(tools, c.tool, c.text, []string{"timed_out"}); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: %v, want %v", c.tool, c.text, got, c.want)
		}
	}
}
