package registry

import (
	"context"
	"encoding/json"

	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Server returns the run's MCP server for mode, made on first use. Every
// tool of the catalog is on it, so that a call to one the caller cannot see
// reaches the call path and is refused there, in the same words as on the
// direct path; tools/list shows only the tools registered in this run that
// the mode sees (REG-5).
func (r *Run) Server(mode tiers.Mode) (*server.MCPServer, error) {
	if _, err := tiers.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	if r.ctx.Err() != nil {
		return nil, ErrClosed
	}
	return r.servers.get(mode, func(sessions *sessionSet) *server.MCPServer {
		hooks := &server.Hooks{}
		hooks.AddAfterListTools(func(ctx context.Context, id any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
			res.Tools = r.Visible(mode)
		})
		hooks.AddOnRegisterSession(func(ctx context.Context, s server.ClientSession) { sessions.add(s) })
		hooks.AddOnUnregisterSession(func(ctx context.Context, s server.ClientSession) { sessions.remove(s) })
		s := server.NewMCPServer(r.cfg.Name, r.cfg.Version,
			server.WithToolCapabilities(true),
			server.WithLogging(),
			server.WithHooks(hooks),
			server.WithInstructions(r.instructions()),
		)
		tools := make([]server.ServerTool, 0, len(r.table.names))
		for _, n := range r.table.names {
			tools = append(tools, server.ServerTool{Tool: r.table.tools[n].tool, Handler: r.peerHandler(mode, r.table.tools[n], s)})
		}
		s.AddTools(tools...)
		return s
	}), nil
}

// peerHandler enters the run's call path for a tools/call from a peer in
// mode. A call that asks its human something returns MCP's input_required
// and resumes when the peer retries with the answer (registry/elicit).
func (r *Run) peerHandler(mode tiers.Mode, e *entry, s *server.MCPServer) server.ToolHandlerFunc {
	name, asks := e.d.Name, r.gate.mayAsk(&e.d)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "" {
			return r.parked.Resume(ctx, req)
		}
		var args json.RawMessage
		switch a := req.Params.Arguments.(type) {
		case nil:
		case json.RawMessage:
			args = a
		default:
			b, err := json.Marshal(a)
			if err != nil {
				return Failf("arguments for %s could not be read: %v", name, err), nil
			}
			args = b
		}
		p := &Peer{srv: s}
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			p.session = cs
		}
		if req.Params.Meta != nil {
			p.token = req.Params.Meta.ProgressToken
		}
		if !asks {
			return r.call(ctx, mode, name, args, nil, "", p)
		}
		return r.parked.Converse(ctx, r.ctx, s, p.session, func(callCtx context.Context, ex *elicit.Exchange) (*mcp.CallToolResult, error) {
			p.ex = ex
			return r.call(callCtx, mode, name, args, nil, "", p)
		})
	}
}

// Peer is the MCP client a call came from. It outlives the call, so work
// the call started can still report to it; every method is a no-op on a
// nil Peer (the direct path).
type Peer struct {
	srv     *server.MCPServer
	session server.ClientSession
	token   mcp.ProgressToken
	ex      *elicit.Exchange // the call's conversation with its client, while it runs
}

// Progress sends a progress notification for the peer's progress token,
// if the peer gave one.
func (p *Peer) Progress(done, total float64, msg string) {
	if p == nil || p.token == nil || p.session == nil {
		return
	}
	params := map[string]any{"progressToken": p.token, "progress": done}
	if total > 0 {
		params["total"] = total
	}
	if msg != "" {
		params["message"] = msg
	}
	_ = p.srv.SendNotificationToSpecificClient(p.session.SessionID(), string(mcp.MethodNotificationProgress), params)
}

// Notify sends a notification to this peer.
func (p *Peer) Notify(method string, params map[string]any) error {
	if p == nil || p.session == nil {
		return nil
	}
	return p.srv.SendNotificationToSpecificClient(p.session.SessionID(), method, params)
}

// Client connects an in-process MCP client to the run's server for mode and
// initializes it with Config.ClientProtocol. Pass client options such as
// client.WithElicitationHandler to answer ask_user through the harness's own
// UI.
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

// instructions is what a client is told of the run when it connects: the
// root, and what tools lose in this run (Degraded).
func (r *Run) instructions() string {
	s := "Tools bound to this run's root " + r.guard.Root() + ". Paths are relative to it."
	for _, d := range r.requirements.degraded {
		s += "\n" + d.String() + "."
	}
	return s
}
