package registry

import (
	"context"
	"fmt"

	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func (c *Call) root() *Call {
	for c.Parent != nil {
		c = c.Parent
	}
	return c
}

// Elicit asks the human at the call's MCP client (REG-7, ASK-1) and waits
// for the answer, at most Config.QuestionTimeout or until ctx ends. A child
// call asks through its root's peer. Without a client that can show it —
// none, one without the capability, or one that did not come back for the
// call's previous question — it fails at once with elicit.ErrNoPeer.
func (c *Call) Elicit(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	p := c.peer
	if p == nil {
		return nil, fmt.Errorf("%w: this call did not come from an MCP client", elicit.ErrNoPeer)
	}
	if p.ex == nil {
		return nil, fmt.Errorf("%w: %s does not declare that it asks (Descriptor.Asks), so its call cannot pause for an answer", elicit.ErrNoPeer, c.root().Tool.Name)
	}
	info, ok := p.session.(server.SessionWithClientInfo)
	if !ok || info.GetClientCapabilities().Elicitation == nil {
		name := "the MCP client"
		if ok && info.GetClientInfo().Name != "" {
			name = "the MCP client " + info.GetClientInfo().Name
		}
		return nil, fmt.Errorf("%w: %s did not declare the elicitation capability", elicit.ErrNoPeer, name)
	}
	return p.ex.Ask(ctx, params, c.Run.cfg.QuestionTimeout)
}
