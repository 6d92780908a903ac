package registry

import (
	"context"
	"encoding/json"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Server returns the run's MCP server for mode, made on first use. It lists
// every registered tool the mode sees; its tool filter hides the others and
// refuses calls to them by name (REG-5).
func (r *Run) Server(mode tiers.Mode) (*server.MCPServer, error) {
	if _, err := tiers.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if s, ok := r.servers[mode]; ok {
		return s, nil
	}
	// tools/list shows only what the mode sees. A hidden tool stays
	// callable by name only to be refused by the call path with a tool
	// error that says why, in the same form Run.Call gives; an
	// unknown name is mcp-go's -32602, as the MCP specification says.
	hooks := &server.Hooks{}
	keep := r.filter(mode)
	hooks.AddAfterListTools(func(ctx context.Context, id any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		res.Tools = keep(ctx, res.Tools)
	})
	s := server.NewMCPServer(r.cfg.Name, r.cfg.Version,
		server.WithToolCapabilities(true),
		server.WithHooks(hooks),
		// ask_user and approvals block on the client's answer; mcp-go
		// otherwise refuses that on 2026-07-28 clients over stdio.
		server.WithLegacyServerInitiatedRequests(),
		server.WithInstructions("Tools bound to this run's root "+r.guard.Root()+". Paths are relative to it."),
	)
	var tools []server.ServerTool
	for _, e := range r.registeredLocked() {
		tools = append(tools, r.serverTool(e))
	}
	if len(tools) > 0 {
		s.AddTools(r.bindAll(mode, tools)...)
	}
	r.servers[mode] = s
	return s, nil
}

func (r *Run) serverTool(e *entry) server.ServerTool {
	return server.ServerTool{Tool: e.tool}
}

// bindAll gives each tool the handler that enters the run's call path in
// mode.
func (r *Run) bindAll(mode tiers.Mode, tools []server.ServerTool) []server.ServerTool {
	out := make([]server.ServerTool, len(tools))
	for i, t := range tools {
		name := t.Tool.Name
		t.Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args json.RawMessage
			switch a := req.Params.Arguments.(type) {
			case nil:
			case json.RawMessage:
				args = a
			default:
				b, err := json.Marshal(a)
				if err != nil {
					return Errorf("arguments for %s could not be read: %v", name, err)
				}
				args = b
			}
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			return r.call(ctx, mode, name, args, token)
		}
		out[i] = t
	}
	return out
}

// filter keeps the tools mode sees. mcp-go applies it to tools/list and to
// tools/call alike.
func (r *Run) filter(mode tiers.Mode) server.ToolFilterFunc {
	return func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		out := tools[:0:0]
		for _, t := range tools {
			if e, ok := r.tools[t.Name]; ok && mode.Sees(e.d.Tier) {
				out = append(out, t)
			}
		}
		return out
	}
}

// Client connects an in-process MCP client to the run's server for mode and
// initializes it with Config.ClientProtocol. Pass client options such as client.WithElicitationHandler
// to answer ask_user through the harness's own UI.
func (r *Run) Client(ctx context.Context, mode tiers.Mode, opts ...client.ClientOption) (*client.Client, error) {
	s, err := r.Server(mode)
	if err != nil {
		return nil, err
	}
	c, err := client.NewInProcessClientWithOptions(s, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = r.cfg.ClientProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "builtin-tools-harness", Version: r.cfg.Version}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
