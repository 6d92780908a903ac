package toolschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestCheckResultNamesWhereItFails(t *testing.T) {
	tool := mcp.Tool{Name: "t", RawOutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,
		"required":["breakpoints"],"properties":{"breakpoints":{"type":"array","items":{"type":"string"}},"n":{"type":"integer"}}}`)}
	for _, c := range []struct {
		content any
		want    string
	}{
		{map[string]any{"breakpoints": nil}, "at /breakpoints (null): got null, want array"},
		{map[string]any{}, "missing property 'breakpoints'"},
		{map[string]any{"breakpoints": []string{}, "extra": 1}, "additional properties 'extra' not allowed"},
		{map[string]any{"breakpoints": []any{1}}, "at /breakpoints/0 (1): got number, want string"},
		{nil, "no structured content"},
	} {
		res := &mcp.CallToolResult{StructuredContent: c.content}
		err := toolschema.CheckResult(tool, res)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error saying %q", c.content, err, c.want)
		}
	}
	ok := &mcp.CallToolResult{StructuredContent: map[string]any{"breakpoints": []string{"b1"}, "n": 2}}
	if err := toolschema.CheckResult(tool, ok); err != nil {
		t.Errorf("a valid result: %v", err)
	}
	if err := toolschema.CheckResult(tool, &mcp.CallToolResult{IsError: true}); err != nil {
		t.Errorf("an error result needs no structured content: %v", err)
	}
}
