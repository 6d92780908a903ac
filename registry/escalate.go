package registry

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/builtin-tools/builtin-tools/tiers"
)

// Escalate passes the approval gate again, at tier t, for something the
// call is about to do beyond its tool's tier: a write tool changing a file
// git executes (a hook, the repository's config) does what an exec tool
// does. path names what, for the approval card. The call's mode must see
// tier t, and the run's policy for t decides as for a tool of that tier;
// the tool's Approve hook, which judges the call's own arguments, has no
// say. A nil error means go ahead; otherwise the error is the refusal,
// written for the agent.
func (c *Call) Escalate(ctx context.Context, t tiers.Tier, path string) error {
	return c.EscalateCard(ctx, t, path, "")
}

// EscalateCard is Escalate with what the approval card shows of it
// besides path (the diff of an edit a language server's command sent).
func (c *Call) EscalateCard(ctx context.Context, t tiers.Tier, path, card string) error {
	if !c.Mode.Sees(t) {
		return errors.New(c.Mode.Refusal(c.Tool.Name, t))
	}
	d := *c.Tool
	d.Tier = t
	args, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		return err
	}
	esc := &Call{Run: c.Run, Mode: c.Mode, Tool: &d, Args: args, Parent: c.Parent, Origin: c.Origin, entry: c.entry, peer: c.peer,
		escalation: true, approvalSummary: card}
	if refused := c.Run.gate.approve(ctx, esc); refused != nil {
		return errors.New(ResultText(refused))
	}
	return nil
}
