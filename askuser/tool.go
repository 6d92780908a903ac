package askuser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type askParams struct {
	Question      string   `json:"question" jsonschema:"what to ask, one clear question"`
	Context       string   `json:"context,omitempty" jsonschema:"why you ask and what the answer decides"`
	Options       []Option `json:"options,omitempty" jsonschema:"choices to offer; each has a label and an optional description"`
	AllowFreeText bool     `json:"allow_free_text,omitempty" jsonschema:"let the human type an answer of their own"`
	MultiSelect   bool     `json:"multi_select,omitempty" jsonschema:"let the human pick several options"`
}

// AskTool is the ask_user tool (ASK-1..3). It is registered only when the
// run has an ask port.
var AskTool = registry.Descriptor{
	Name:  "ask_user",
	Title: "ask the user",
	Tier:  tiers.Read,
	Description: "Ask the human operator a question and wait for the answer. This is the only way to ask: a question written as a chat message ends your turn. " +
		"Offer options when you can, with allow_free_text for anything else. If the human skips the question, proceed under an explicitly stated " +
		"assumption and do not ask again.",
	Asks:    true,
	Handler: registry.With(Key, ask),
}

// AskResult is the human's response as data.
type AskResult struct {
	// Outcome is answered, declined or cancelled.
	Outcome string   `json:"outcome" jsonschema:"answered, declined or cancelled"`
	Choices []string `json:"choices,omitempty" jsonschema:"labels of the options picked"`
	Answer  string   `json:"answer,omitempty" jsonschema:"free text typed by the human"`
}

// Text is what the agent reads.
func (a AskResult) Text() string {
	switch a.Outcome {
	case Declined.String(), Cancelled.String():
		how := "declined to answer"
		if a.Outcome == Cancelled.String() {
			how = "dismissed the question without answering"
		}
		return fmt.Sprintf("Skipped (%s): the user %s. Proceed under an explicitly stated assumption — say which one — and do not ask this question again.", a.Outcome, how)
	}
	var parts []string
	if len(a.Choices) > 0 {
		parts = append(parts, "chose "+quoteAll(a.Choices))
	}
	if a.Answer != "" {
		parts = append(parts, fmt.Sprintf("wrote: %s", a.Answer))
	}
	return "The user " + strings.Join(parts, " and ") + "."
}

func ask(ctx context.Context, c *registry.Call, asker *Asker, p askParams) (AskResult, error) {
	q := Question{Question: strings.TrimSpace(p.Question), Context: p.Context, Options: p.Options, AllowFreeText: p.AllowFreeText, MultiSelect: p.MultiSelect}
	if err := q.check(); err != nil {
		return AskResult{}, err
	}
	ans, err := asker.Ask(ctx, q)
	if err != nil {
		return AskResult{}, failed(err, asker)
	}
	return AskResult{Outcome: ans.Outcome.String(), Choices: ans.Choices, Answer: ans.Text}, nil
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// failed is the answer the agent reads when the question got no answer
// to use: what happened, and what to do without one.
func failed(err error, asker *Asker) error {
	out := &Error{Err: err}
	switch {
	case errors.Is(err, ErrTimeout):
		out.Kind = ErrTimeout
		out.Msg = fmt.Sprintf("The question timed out: nobody answered within %s. Proceed under an explicitly stated assumption — say which one — and do not ask this question again.", asker.timeout())
	case errors.Is(err, ErrInvalidAnswer):
		out.Kind = ErrInvalidAnswer
		out.Msg = fmt.Sprintf("The question was asked, but the answer cannot be used: %s. Otherwise proceed under an explicitly stated assumption, and say which one.", detail(err))
	case errors.Is(err, elicit.ErrNoAnswer):
		out.Kind = ErrNoHuman
		out.Msg = fmt.Sprintf("The question was sent to the MCP client, but no answer came back (%s). Do not wait for an answer and do not ask again: proceed under an explicitly stated assumption and say which one.", detail(err))
	case errors.Is(err, ErrNoHuman):
		out.Kind = ErrNoHuman
		out.Msg = fmt.Sprintf("The question could not be asked: %v. Do not wait for an answer and do not ask again: proceed under an explicitly stated assumption and say which one.", err)
	default:
		out.Msg = fmt.Sprintf("The question could not be asked: %v", err)
	}
	return out
}
