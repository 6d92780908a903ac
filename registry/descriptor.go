package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// HandlerFunc is a tool's handler as wrappers see it: the call in, an MCP
// result out. A Go error is a protocol fault; tool failures are results.
type HandlerFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Descriptor declares a tool, as a struct literal:
//
//	var ReadTool = registry.Descriptor{
//		Name: "read", Title: "read file", Tier: tiers.Read,
//		Description: "…",
//		Handler: registry.Func(read),
//	}
type Descriptor struct {
	Name        string
	Title       string
	Description string
	Tier        tiers.Tier
	// Serial marks a tool whose state accumulates across calls (a debug
	// session, an interpreter): the run serializes its calls in arrival
	// order (REG-10), and tools/list says so in _meta.
	Serial bool
	// OpenWorld marks a tool that reaches beyond the run's root.
	OpenWorld bool
	// Writes marks a tool that writes files and records each with
	// Call.Wrote; wrappers such as diagnostics-on-write select on it.
	Writes bool
	// Asks marks a tool whose handler may ask the human mid-call (ask_user;
	// a bridge whose child calls may need approval). Its peer calls run so
	// that they can pause for the answer; others run on the request's own
	// goroutine.
	Asks bool
	// Stages marks a write tool that writes nothing itself: it stages a
	// change that a later call applies (ast_edit, then resolve). Under
	// write=ask it is not asked about — the applying call is, once; under
	// write=deny it is refused like any write.
	Stages bool
	// Renamed maps argument names the tool once took to their names now,
	// so a caller using an old one is told the new one (not in the schema:
	// no aliases).
	Renamed map[string]string
	// Handler is the typed body, built with Func or With.
	Handler Handler
}

// Output is what a typed handler returns: data, published as the result's
// structuredContent under the tool's outputSchema, that also says itself as
// the text the agent reads.
type Output interface {
	Text() string
}

// Contenter is an Output with content blocks besides its text (an image).
type Contenter interface {
	MoreContent() []mcp.Content
}

// Handler is a tool's typed body: its input and output schemas and the
// resource it needs come from its type parameters.
type Handler struct{ h *handler }

type handler struct {
	need    string // resource key name, "" for none
	in, out json.RawMessage
	params  []string // argument names, sorted, for messages
	call    func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
	// The hooks (Approve, Interrupts), nil when the tool has none.
	approve    func(ctx context.Context, c *Call) (needed bool, summary string, err error)
	interrupts func(c *Call) bool

	once     sync.Once
	compiled *validator.Schema
	err      error
}

// Func builds a handler that needs no resource. P is the params struct:
// json tags name the arguments, a field without omitempty is required, the
// jsonschema tag describes it and an enum:"a,b" tag lists its choices. R is
// the result; its JSON form is the outputSchema. hooks (Approve,
// Interrupts) get the resource as None.
func Func[P any, R Output](fn func(ctx context.Context, c *Call, p P) (R, error), hooks ...Hook[None, P]) Handler {
	always := func(*Run) (None, bool) { return None{}, true }
	return newHandler("", always, func(ctx context.Context, c *Call, _ None, p P) (R, error) { return fn(ctx, c, p) }, hooks)
}

// With builds a handler that needs the resource under k and receives it
// typed. The tool is registered only while that resource is attached.
func With[T any, P any, R Output](k Key[T], fn func(ctx context.Context, c *Call, res T, p P) (R, error), hooks ...Hook[T, P]) Handler {
	return newHandler(k.name, k.Of, fn, hooks)
}

// Hook is a typed hook on a tool's call path, beside its handler: built
// with Approve or Interrupts and given to With or Func, it gets the call's
// arguments decoded into the handler's own params P — once per call, the
// same value the handler gets, so it must not change it — and the
// handler's resource T. A hook that does not fit its handler does not
// compile.
type Hook[T, P any] struct {
	approve    func(ctx context.Context, c *Call, res T, p P) (bool, string)
	interrupts func(res T, p P) bool
}

// Approve tells the approval gate, when the run's policy asks about the
// tool's tier, whether this call needs approval at all (resolve's discard
// writes nothing) and what the card shows of it besides the arguments (the
// staged diff's summary). It is not asked about a Call.Escalate: that card
// shows what the escalation names. While the resource is not attached the
// call is asked about with no summary.
func Approve[T, P any](fn func(ctx context.Context, c *Call, res T, p P) (needed bool, summary string)) Hook[T, P] {
	return Hook[T, P]{approve: fn}
}

// Interrupts, for a serial tool, picks the calls that do not queue behind
// a running call of the tool (a debugger's pause and terminate, which must
// reach a resume that is waiting); the tool keeps them consistent itself.
func Interrupts[T, P any](fn func(res T, p P) bool) Hook[T, P] {
	return Hook[T, P]{interrupts: fn}
}

// paramsOf decodes the call's arguments into P once per call; the hooks
// and the handler share the value.
func paramsOf[P any](c *Call) (P, error) {
	if p, ok := c.params.(P); ok {
		return p, nil
	}
	var p P
	if len(c.Args) > 0 {
		if err := json.Unmarshal(c.Args, &p); err != nil {
			return p, fmt.Errorf("arguments for %s do not fit its schema: %v", c.Tool.Name, err)
		}
	}
	c.params = p
	return p, nil
}

func newHandler[T, P any, R Output](need string, resource func(*Run) (T, bool), fn func(ctx context.Context, c *Call, res T, p P) (R, error), hooks []Hook[T, P]) Handler {
	in, params, err := toolschema.Input[P]()
	if err != nil {
		panic(fmt.Sprintf("registry: input schema of %v: %v", reflect.TypeFor[P](), err))
	}
	out, err := toolschema.Output[R]()
	if err != nil {
		panic(fmt.Sprintf("registry: output schema of %v: %v", reflect.TypeFor[R](), err))
	}
	h := &handler{need: need, in: in, out: out, params: params}
	h.call = func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
		p, err := paramsOf[P](c)
		if err != nil {
			return Fail(err), nil
		}
		res, ok := resource(c.Run)
		if !ok {
			return Failf("%s needs the run's %s resource, which is not attached (it may be closing)", c.Tool.Name, need), nil
		}
		r, err := fn(ctx, c, res, p)
		if err != nil {
			return Fail(err), nil
		}
		return Result(r), nil
	}
	for _, k := range hooks {
		switch {
		case k.approve != nil:
			if h.approve != nil {
				panic(fmt.Sprintf("registry: two Approve hooks on the handler of %v", reflect.TypeFor[P]()))
			}
			approve := k.approve
			h.approve = func(ctx context.Context, c *Call) (bool, string, error) {
				p, err := paramsOf[P](c)
				if err != nil {
					return false, "", err
				}
				res, ok := resource(c.Run)
				if !ok {
					return true, "", nil
				}
				needed, summary := approve(ctx, c, res, p)
				return needed, summary, nil
			}
		case k.interrupts != nil:
			if h.interrupts != nil {
				panic(fmt.Sprintf("registry: two Interrupts hooks on the handler of %v", reflect.TypeFor[P]()))
			}
			interrupts := k.interrupts
			h.interrupts = func(c *Call) bool {
				p, err := paramsOf[P](c)
				if err != nil {
					return false
				}
				res, ok := resource(c.Run)
				return ok && interrupts(res, p)
			}
		}
	}
	return Handler{h}
}

// Needs names the resource the tool needs, "" for none.
func (d *Descriptor) Needs() string {
	if d.Handler.h == nil {
		return ""
	}
	return d.Handler.h.need
}

// InputSchema is the JSON Schema of the tool's arguments.
func (d *Descriptor) InputSchema() json.RawMessage { return d.Handler.h.in }

// OutputSchema is the JSON Schema of the tool's structuredContent.
func (d *Descriptor) OutputSchema() json.RawMessage { return d.Handler.h.out }

// validator compiles the input schema once per process.
func (h *handler) validator(name string) (*validator.Schema, error) {
	h.once.Do(func() {
		h.compiled, h.err = toolschema.CompileInput(name, h.in)
		if h.err != nil {
			h.err = fmt.Errorf("registry: tool %s: %w", name, h.err)
		}
	})
	return h.compiled, h.err
}

// Result renders a typed output as an MCP result: its text, its extra
// content, and its JSON as structuredContent.
func Result(r Output) *mcp.CallToolResult {
	if isNil(r) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("")}}
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(r.Text())}}
	if c, ok := r.(Contenter); ok {
		res.Content = append(res.Content, c.MoreContent()...)
	}
	res.StructuredContent = toolschema.WithoutNulls(r)
	return res
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// MCPTool renders the descriptor as the MCP tool a peer lists.
func (d *Descriptor) MCPTool() mcp.Tool {
	title := d.Title
	if title == "" {
		title = d.Name
	}
	t := mcp.Tool{
		Name:            d.Name,
		Title:           title,
		Description:     d.Description,
		RawInputSchema:  d.InputSchema(),
		RawOutputSchema: d.OutputSchema(),
		Annotations:     Annotations(d.Tier, title, d.OpenWorld),
	}
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{
		MetaTier:   string(d.Tier),
		MetaSerial: d.Serial,
	}}
	return t
}

// Keys of the tool _meta a harness can schedule by.
const (
	MetaTier = "builtin-tools/tier"
	// MetaSerial true: the run serializes this tool's calls; run them one
	// at a time.
	MetaSerial = "builtin-tools/serial"
)

// Fail returns a tool error result holding err's text: a failure the agent
// can read and act on.
func Fail(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(err.Error())
}

// Failf returns a tool error result with a formatted text. Say what went
// wrong and what to do instead.
func Failf(format string, args ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...))
}

// ResultText joins the text blocks of a result, for callers and tests that
// read results as text.
func ResultText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// WithEnum sets the choices of argument arg in the handler's input schema,
// for choices a table builds at init rather than a struct tag.
func (h Handler) WithEnum(arg string, values []string) Handler {
	raw, err := toolschema.WithEnum(h.h.in, arg, values)
	if err != nil {
		panic(fmt.Sprintf("registry: WithEnum: %v", err))
	}
	return Handler{&handler{need: h.h.need, in: raw, out: h.h.out, params: h.h.params, call: h.h.call, approve: h.h.approve, interrupts: h.h.interrupts}}
}
