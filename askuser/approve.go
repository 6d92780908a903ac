package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Approver answers the registry's approval gate (REG-7) by asking through
// the run's ask port, with the same card as ask_user.
type Approver struct{}

// Approve asks the operator whether c may run.
func (Approver) Approve(ctx context.Context, c *registry.Call) (bool, string, error) {
	asker, ok := Key.Of(c.Run)
	if !ok {
		return false, "", noHuman("this run has no ask port")
	}
	about := "Arguments:\n" + summarize(c.Args)
	if s := c.ApprovalSummary(); s != "" {
		about = s + "\n\n" + about
	}
	ans, err := asker.Ask(ctx, Question{
		Question: approvalQuestion(c),
		Context:  about,
		Options: []Option{
			{Label: "Allow", Description: "run this call"},
			{Label: "Deny", Description: "refuse it; the agent is told not to retry"},
		},
	})
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		return false, "", err
	}
	if ans.Outcome != Answered {
		return false, fmt.Sprintf("the operator %s the approval question", ans.Outcome), nil
	}
	if len(ans.Choices) == 1 && ans.Choices[0] == "Allow" {
		return true, "", nil
	}
	return false, "the operator denied it", nil
}

// approvalQuestion names the tool, its main argument, where a child call
// came from, and the tier: "Allow write lib/auth.dart, called from an eval
// cell? (a write tool)".
func approvalQuestion(c *registry.Call) string {
	what := c.Tool.Name + " to run"
	if target := mainArgument(c.Args); target != "" {
		what = c.Tool.Name + " " + target
	}
	if c.Parent != nil {
		origin := c.Origin
		if origin == "" {
			origin = "inside " + c.Parent.Tool.Name
		}
		what += ", called from " + origin
	}
	return fmt.Sprintf("Allow %s? (a %s tool)", what, c.Tool.Tier)
}

// mainArgument is the argument a human recognises a call by: its file or
// path.
func mainArgument(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"file", "path", "paths"} {
		if s, ok := m[k].(string); ok && s != "" {
			return textcut.Ellipsis(s, 120)
		}
	}
	return ""
}

// summarize shows arguments for a human, long values cut.
func summarize(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return string(args)
	}
	for k, v := range m {
		if s, ok := v.(string); ok && utf8.RuneCountInString(s) > 300 {
			m[k] = fmt.Sprintf("%s… (%d characters)", string([]rune(s)[:300]), utf8.RuneCountInString(s))
		}
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b)
}
