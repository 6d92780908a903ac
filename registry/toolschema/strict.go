package toolschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/mark3labs/mcp-go/mcp"
	jsonschema "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CheckResult checks a tool's result as a strict MCP client does before it
// hands the result on (the official SDKs validate structuredContent against
// the tool's outputSchema and throw the result away when it fails): a
// result that is not an error, of a tool that declares an output schema,
// carries structured content, a JSON object valid against that schema —
// null is not a list, no required key is missing, no undeclared key is
// present. The error names the path into the result that failed. Tests of
// every peer run each result through it.
func CheckResult(tool mcp.Tool, res *mcp.CallToolResult) error {
	if res == nil || res.IsError {
		return nil
	}
	raw := toolOutputSchema(tool)
	if len(raw) == 0 {
		return nil
	}
	if res.StructuredContent == nil {
		return fmt.Errorf("%s declares an output schema but its result has no structured content", tool.Name)
	}
	sch, err := strictSchema(tool.Name, raw)
	if err != nil {
		return err
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("%s: structured content is not JSON: %v", tool.Name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: structured content is not JSON: %v", tool.Name, err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return fmt.Errorf("%s: structured content is %s, not a JSON object", tool.Name, textcut.Ellipsis(string(b), 80))
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%s: structured content does not fit the output schema:\n%s", tool.Name, leafErrors(ve, inst))
		}
		return fmt.Errorf("%s: structured content does not fit the output schema: %v", tool.Name, err)
	}
	return nil
}

// toolOutputSchema is the schema a client reads from tools/list.
func toolOutputSchema(tool mcp.Tool) json.RawMessage {
	if len(tool.RawOutputSchema) > 0 {
		return tool.RawOutputSchema
	}
	raw, _ := json.Marshal(tool)
	var wire struct {
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	json.Unmarshal(raw, &wire)
	return wire.OutputSchema
}

var strictSchemas sync.Map // name + schema text → *jsonschema.Schema

func strictSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	key := name + "\x00" + string(raw)
	if s, ok := strictSchemas.Load(key); ok {
		return s.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: output schema is not JSON: %v", name, err)
	}
	s, err := compileDoc("output:"+name, doc)
	if err != nil {
		return nil, fmt.Errorf("%s: output schema: %v", name, err)
	}
	strictSchemas.Store(key, s)
	return s, nil
}

// leafErrors lists the innermost failures, one line each: where in the
// result, what it holds there, and what the schema wanted.
func leafErrors(ve *jsonschema.ValidationError, inst any) string {
	var b bytes.Buffer
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + joinLoc(e.InstanceLocation)
			fmt.Fprintf(&b, "  at %s (%s): %s\n", loc, textcut.Ellipsis(valueAt(inst, e.InstanceLocation), 60), e.ErrorKind.LocalizedString(english))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

func joinLoc(loc []string) string {
	var b bytes.Buffer
	for i, p := range loc {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p)
	}
	return b.String()
}

// valueAt is the JSON text at loc in inst.
func valueAt(inst any, loc []string) string {
	v := inst
	for _, p := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			fmt.Sscan(p, &i)
			if i < 0 || i >= len(x) {
				return "?"
			}
			v = x[i]
		default:
			return "?"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var english = message.NewPrinter(language.English)
