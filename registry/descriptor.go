package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
)

// ResourceKind names a live resource a tool needs before it is registered.
type ResourceKind string

// The resources of the design (REG-2). Conversation is satisfied by a
// non-empty Config.ConversationID rather than by Attach.
const (
	LSP          ResourceKind = "lsp"          // a language-server supervisor
	TreeSitter   ResourceKind = "treesitter"   // a tree-sitter engine
	Debugger     ResourceKind = "debug"        // a debug-session supervisor
	Kernels      ResourceKind = "kernel"       // an interpreter kernel factory
	AskPort      ResourceKind = "ask"          // a channel to a human
	Workers      ResourceKind = "vibe"         // a background worker roster
	Conversation ResourceKind = "conversation" // a conversation id
)

// HandlerFunc runs one call. Return a result (use Errorf for failures the
// agent can act on); a non-nil error is a protocol fault.
type HandlerFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Descriptor declares a tool. Build one with Tool.
type Descriptor struct {
	Name        string
	Title       string
	Description string
	Tier        tiers.Tier
	// Needs lists the resources that must be attached for the tool to be
	// registered at all.
	Needs []ResourceKind
	// Serial marks a tool whose state accumulates across calls (a debug
	// session, an interpreter): the run serializes its calls in arrival
	// order (REG-10).
	Serial bool
	// OpenWorld marks a tool that reaches beyond the run's root.
	OpenWorld bool
	// Schema is the JSON Schema of the arguments, an object.
	Schema json.RawMessage
	// Handler runs the call with arguments already validated.
	Handler HandlerFunc
}

// Tool builds a descriptor whose schema is derived from the params struct P
// (json tags name the arguments; a field without omitempty is required; the
// jsonschema tag is the argument's description) and whose handler receives
// the decoded arguments.
func Tool[P any](name string, tier tiers.Tier, description string, needs []ResourceKind,
	h func(ctx context.Context, c *Call, p P) (*mcp.CallToolResult, error)) Descriptor {
	schema, err := jsonschema.For[P](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("registry: schema for tool %s: %v", name, err))
	}
	dropNullTypes(schema)
	addEnums(reflect.TypeFor[P](), schema)
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("registry: schema for tool %s: %v", name, err))
	}
	return Descriptor{
		Name:        name,
		Description: description,
		Tier:        tier,
		Needs:       needs,
		Schema:      raw,
		Handler: func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			var p P
			if len(c.Args) > 0 {
				if err := json.Unmarshal(c.Args, &p); err != nil {
					return Errorf("arguments for %s do not fit its schema: %v", name, err)
				}
			}
			return h(ctx, c, p)
		},
	}
}

// dropNullTypes turns the ["null", T] types generated for slices, maps and
// pointers into T: an omitted argument already means "none", and a single
// type is what every client's schema dialect accepts.
func dropNullTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	} else if len(s.Types) == 2 && s.Types[1] == "null" {
		s.Type, s.Types = s.Types[0], nil
	}
	for _, p := range s.Properties {
		dropNullTypes(p)
	}
	dropNullTypes(s.Items)
	dropNullTypes(s.AdditionalProperties)
}

// addEnums copies `enum:"a,b"` tags of a params struct's fields into the
// schema, so clients offer the choices and validation names them.
func addEnums(t reflect.Type, s *jsonschema.Schema) {
	if t.Kind() != reflect.Struct || s == nil {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		values, ok := f.Tag.Lookup("enum")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if p := s.Properties[name]; p != nil {
			for _, v := range strings.Split(values, ",") {
				p.Enum = append(p.Enum, v)
			}
		}
	}
}

// MCPTool renders the descriptor as the MCP tool a peer lists.
func (d *Descriptor) MCPTool() mcp.Tool {
	title := d.Title
	if title == "" {
		title = d.Name
	}
	t := mcp.Tool{
		Name:           d.Name,
		Title:          title,
		Description:    d.Description,
		RawInputSchema: d.Schema,
		Annotations:    d.Tier.Annotations(title, d.OpenWorld),
	}
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{
		MetaTier:     string(d.Tier),
		MetaParallel: !d.Serial,
	}}
	return t
}

// Keys of the tool _meta a harness can schedule by.
const (
	MetaTier     = "builtin-tools/tier"
	MetaParallel = "builtin-tools/parallelSafe"
)

// Errorf returns a tool error result: a failure the agent can read and act
// on. Say what went wrong and what to do instead.
func Errorf(format string, args ...any) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...)), nil
}

// Text returns a successful result holding s.
func Text(s string) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(s), nil
}

// ResultText joins the text blocks of a result, for callers and tests that
// read results as text.
func ResultText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	out := ""
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			if out != "" {
				out += "\n"
			}
			out += tc.Text
		}
	}
	return out
}
