// Package runtest holds the steps that tests of several packages take on a
// registry.Run: calling a tool with arguments, directly or through an MCP
// client, and connecting the client.
// It is apart from testenv, which registry's own tests import.
package runtest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Call calls tool on r in mode with args as its JSON arguments and gives
// the result's text and whether it is a tool error; a protocol error fails
// t.
func Call(t testing.TB, r *registry.Run, mode tiers.Mode, tool string, args map[string]any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := r.Call(context.Background(), mode, tool, b)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return registry.ResultText(res), res.IsError
}

// Client connects an in-process MCP client to r in mode, closed when t
// ends.
func Client(t testing.TB, r *registry.Run, mode tiers.Mode) *client.Client {
	t.Helper()
	c, err := r.Client(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ClientCall calls tool through c with args, as an agent does, and gives
// the result; a protocol error fails t.
func ClientCall(t testing.TB, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if args != nil {
		req.Params.Arguments = args // a nil map would be sent as null
	}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}
