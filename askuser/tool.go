package askuser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type askParams struct {
	Question      string   `json:"question" jsonschema:"what to ask, one clear question"`
	Context       string   `json:"context,omitempty" jsonschema:"why you ask and what the answer decides"`
	Options       []Option `json:"options,omitempty" jsonschema:"choices to offer; each has a label and an optional description"`
	AllowFreeText bool     `json:"allow_free_text,omitempty" jsonschema:"let the human type an answer of their own"`
	MultiSelect   bool     `json:"multi_select,omitempty" jsonschema:"let the human pick several options"`
}

// Tool is the ask_user tool (ASK-1..3). It is registered only when the run
// has an ask port.
var Tool = registry.Tool("ask_user", tiers.Read,
	"Ask the human operator a question and wait for the answer. This is the only way to ask: a question written as a chat message ends your turn. "+
		"Offer options when you can, with allow_free_text for anything else. If the human skips the question, proceed under an explicitly stated "+
		"assumption and do not ask again.",
	[]registry.ResourceKind{registry.AskPort}, ask)

func ask(ctx context.Context, c *registry.Call, p askParams) (*mcp.CallToolResult, error) {
	asker, ok := registry.Resource[*Asker](c.Run, registry.AskPort)
	if !ok {
		return registry.Errorf("no ask port is attached to this run; proceed under an explicitly stated assumption")
	}
	q := Question{Question: strings.TrimSpace(p.Question), Context: p.Context, Options: p.Options, AllowFreeText: p.AllowFreeText, MultiSelect: p.MultiSelect}
	if err := q.check(); err != nil {
		return registry.Errorf("%v", err)
	}
	ans, err := asker.Ask(ctx, q)
	switch {
	case errors.Is(err, ErrTimeout):
		return registry.Errorf("The question timed out (%v): nobody answered. Proceed under an explicitly stated assumption — say which one — and do not ask this question again.", err)
	case errors.Is(err, ErrNoHuman):
		return registry.Errorf("The question could not be asked: %v. Do not wait for an answer and do not ask again: proceed under an explicitly stated assumption and say which one.", err)
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return registry.Errorf("The question could not be asked: %v", err)
	}
	switch ans.Outcome {
	case Declined, Cancelled:
		how := "declined to answer"
		if ans.Outcome == Cancelled {
			how = "dismissed the question without answering"
		}
		return registry.Text(fmt.Sprintf("Skipped (%s): the user %s. Proceed under an explicitly stated assumption — say which one — and do not ask this question again.", ans.Outcome, how))
	}
	var parts []string
	if len(ans.Choices) > 0 {
		parts = append(parts, "chose "+quoteAll(ans.Choices))
	}
	if ans.Text != "" {
		parts = append(parts, fmt.Sprintf("wrote: %s", ans.Text))
	}
	return registry.Text("The user " + strings.Join(parts, " and ") + ".")
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
