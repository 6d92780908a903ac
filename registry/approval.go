package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Decision is what the approval gate does with a call of some tier.
type Decision string

// Approval decisions (REG-7).
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Policy maps the write and exec tiers to a decision. A tier missing from
// the map is allowed; read tools never pass the gate.
type Policy map[tiers.Tier]Decision

// ParsePolicy reads "write=ask,exec=deny".
func ParsePolicy(s string) (Policy, error) {
	p := Policy{}
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("approval policy %q: want TIER=DECISION pairs such as write=ask,exec=deny", s)
		}
		t, err := tiers.ParseTier(k)
		if err != nil {
			return nil, err
		}
		if t == tiers.Read {
			return nil, fmt.Errorf("approval policy: read tools are never gated; set write or exec")
		}
		d := Decision(v)
		if d != Allow && d != Ask && d != Deny {
			return nil, fmt.Errorf("approval policy: %q is not allow, ask or deny", v)
		}
		p[t] = d
	}
	return p, nil
}

// String writes the policy as ParsePolicy reads it, every gated tier
// named ("write=allow,exec=deny"), so a worker given it needs no defaults.
func (p Policy) String() string {
	parts := make([]string, 0, 2)
	for _, t := range []tiers.Tier{tiers.Write, tiers.Exec} {
		d := p[t]
		if d == "" {
			d = Allow
		}
		parts = append(parts, string(t)+"="+string(d))
	}
	return strings.Join(parts, ",")
}

// Approver decides calls whose tier the policy marks Ask.
type Approver interface {
	// Approve asks whether c may run. ok false refuses it with reason; an
	// error (no human, a timeout) refuses it too: the gate fails closed.
	Approve(ctx context.Context, c *Call) (ok bool, reason string, err error)
}

// gate is the run's approval gate (REG-7): the policy and the approver
// Config gave it, fixed for the run's life.
type gate struct {
	policy   Policy
	approver Approver
}

// mayAsk reports whether a call of a tool may pause for a human: the tool
// declares Asks, or the policy asks for its tier.
func (g gate) mayAsk(d *Descriptor) bool {
	return d.Asks || g.policy[d.Tier] == Ask
}

// approve runs the approval gate (REG-7); a non-nil result refuses the call.
func (g gate) approve(ctx context.Context, c *Call) *mcp.CallToolResult {
	t := c.Tool.Tier
	if t == tiers.Read {
		return nil
	}
	d := g.policy[t]
	switch d {
	case "", Allow:
		return nil
	case Ask:
		if c.Tool.Stages {
			return nil // the call that applies what it stages is asked
		}
		if h := c.entry.d.Handler.h; h.approve != nil && !c.escalation {
			needed, summary, err := h.approve(ctx, c)
			if err != nil {
				return Fail(err)
			}
			if !needed {
				return nil
			}
			c.approvalSummary = summary
		}
	case Deny:
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: this run's approval policy denies %s tools (%s=deny). Do not retry; tell the user what you would have done.", c.Tool.Name, t, t))
	}
	if g.approver == nil {
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: %s tools need approval in this run, and no one is attached to approve (fail closed). Do not retry; tell the user what you would have done.", c.Tool.Name, t))
	}
	ok, reason, err := g.approver.Approve(ctx, c)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: approval could not be obtained: %v. Do not retry; tell the user what you would have done.", c.Tool.Name, err))
	}
	if !ok {
		if reason == "" {
			reason = "the operator did not approve it"
		}
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: %s. Do not retry this call; ask for direction or do something else.", c.Tool.Name, reason))
	}
	return nil
}
