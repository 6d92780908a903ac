package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/registry"
)

// Approver answers the registry's approval gate (REG-7) by asking through
// the run's ask port, with the same card as ask_user.
type Approver struct{}

// Approve asks the operator whether c may run.
func (Approver) Approve(ctx context.Context, c *registry.Call) (bool, string, error) {
	asker, ok := registry.Resource[*Asker](c.Run, registry.AskPort)
	if !ok {
		return false, "", fmt.Errorf("%w: this run has no ask port", ErrNoHuman)
	}
	ans, err := asker.Ask(ctx, Question{
		Question: fmt.Sprintf("Allow %s (a %s tool) to run?", c.Tool.Name, c.Tool.Tier),
		Context:  "Arguments:\n" + summarize(c.Args),
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
