package askuser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/mark3labs/mcp-go/mcp"
)

// Elicitation is the Port that asks through the MCP client of the current
// call, as an elicitation form. The registry carries the question to the
// client as a multi round-trip input request (or, for clients of the
// earlier protocol era, as elicitation/create) and resumes the call with the
// answer. It works only inside a call that came from an MCP client that
// declared the elicitation capability; otherwise it fails at once with
// ErrNoHuman.
type Elicitation struct{}

// Ask sends q as a form elicitation and maps the response.
func (Elicitation) Ask(ctx context.Context, q Question) (Answer, error) {
	c := registry.CallOf(ctx)
	if c == nil {
		return Answer{}, noHuman("the question was not asked from inside a tool call")
	}
	res, err := c.Elicit(ctx, mcp.ElicitationParams{
		Mode:            mcp.ElicitationModeForm,
		Message:         cardText(q),
		RequestedSchema: formSchema(q),
	})
	switch {
	case errors.Is(err, elicit.ErrNoPeer):
		return Answer{}, noHuman("%v, so it cannot show questions", err)
	case errors.Is(err, elicit.ErrNoAnswer):
		// Shown, but nothing came back: nobody to wait for, all the same.
		return Answer{}, &Error{Kind: ErrNoHuman, Detail: err.Error(), Err: err}
	case err != nil:
		return Answer{}, err
	}
	switch res.Action {
	case mcp.ElicitationResponseActionDecline:
		return Answer{Outcome: Declined}, nil
	case mcp.ElicitationResponseActionCancel:
		return Answer{Outcome: Cancelled}, nil
	case mcp.ElicitationResponseActionAccept:
	default:
		return Answer{}, fmt.Errorf("the MCP client answered with unknown action %q", res.Action)
	}
	content, _ := res.Content.(map[string]any)
	ans := Answer{Outcome: Answered}
	switch v := content["choice"].(type) {
	case string:
		if v != "" {
			ans.Choices = []string{v}
		}
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				ans.Choices = append(ans.Choices, s)
			}
		}
	}
	if t, ok := content["answer"].(string); ok {
		ans.Text = strings.TrimSpace(t)
	}
	return ans, nil
}

// formSchema is the flat object schema elicitation allows: a "choice"
// (one label, or an array of labels for multi-select) and an "answer" for
// free text.
func formSchema(q Question) map[string]any {
	props := map[string]any{}
	var required []string
	if len(q.Options) > 0 {
		labels := make([]string, len(q.Options))
		for i, o := range q.Options {
			labels[i] = o.Label
		}
		if q.MultiSelect {
			props["choice"] = map[string]any{
				"type": "array", "title": "Choose any",
				"items": map[string]any{"type": "string", "enum": labels},
			}
		} else {
			props["choice"] = map[string]any{"type": "string", "title": "Choose one", "enum": labels}
		}
		if !q.AllowFreeText {
			required = append(required, "choice")
		}
	}
	if q.AllowFreeText {
		title := "Your answer"
		if len(q.Options) > 0 {
			title = "Or type your own answer"
		}
		props["answer"] = map[string]any{"type": "string", "title": title}
		if len(q.Options) == 0 {
			required = append(required, "answer")
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// cardText renders the question as the text of a card: the question, why it
// is asked, and the options with what each means.
func cardText(q Question) string {
	var b strings.Builder
	b.WriteString(q.Question)
	if q.Context != "" {
		b.WriteString("\n\n" + q.Context)
	}
	if len(q.Options) > 0 {
		b.WriteString("\n")
		for i, o := range q.Options {
			fmt.Fprintf(&b, "\n%d. %s", i+1, o.Label)
			if o.Description != "" {
				b.WriteString(" — " + o.Description)
			}
		}
	}
	return b.String()
}
