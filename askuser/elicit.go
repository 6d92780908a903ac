package askuser

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Elicitation is the Port that asks through the MCP client of the current
// call (elicitation/create). It works only inside a call that arrived through
// a run's MCP server, from a client that declared the elicitation
// capability; otherwise it fails at once with ErrNoHuman.
type Elicitation struct{}

// Ask sends q as a form elicitation and maps the response.
func (Elicitation) Ask(ctx context.Context, q Question) (Answer, error) {
	srv := server.ServerFromContext(ctx)
	session := server.ClientSessionFromContext(ctx)
	if srv == nil || session == nil {
		return Answer{}, fmt.Errorf("%w: this call did not come from an MCP client that could show the question", ErrNoHuman)
	}
	info, ok := session.(server.SessionWithClientInfo)
	if !ok || info.GetClientCapabilities().Elicitation == nil {
		name := "the MCP client"
		if ok && info.GetClientInfo().Name != "" {
			name = "the MCP client " + info.GetClientInfo().Name
		}
		return Answer{}, fmt.Errorf("%w: %s did not declare the elicitation capability, so it cannot show questions", ErrNoHuman, name)
	}
	res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Mode:            mcp.ElicitationModeForm,
			Message:         cardText(q),
			RequestedSchema: formSchema(q),
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, ctx.Err()
		}
		return Answer{}, fmt.Errorf("%w: the MCP client could not show the question: %v", ErrNoHuman, err)
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
