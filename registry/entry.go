package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// entry is one tool of the run's catalog: its descriptor, the MCP tool
// peers list, and the queue of a serial tool. Its methods check a call's
// arguments against the tool's schema.
type entry struct {
	d    Descriptor
	tool mcp.Tool
	// serial admits one call at a time, in arrival order (REG-10).
	serial *fifo
}

// validate checks args against the tool's schema and says, argument by
// argument, what is wrong and what the tool takes.
func (e *entry) validate(args json.RawMessage) (json.RawMessage, string) {
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(args)))
	if err != nil {
		return nil, fmt.Sprintf("arguments for %s are not valid JSON: %v", e.d.Name, err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return nil, fmt.Sprintf("arguments for %s must be a JSON object such as {\"%s\": ...}", e.d.Name, first(e.d.Handler.h.params))
	}
	schema, err := e.d.Handler.h.validator(e.d.Name)
	if err != nil {
		return nil, err.Error()
	}
	err = schema.Validate(inst)
	if err == nil {
		return args, ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Sprintf("arguments for %s: %v", e.d.Name, err)
	}
	problems := toolschema.Problems(ve, e.d.Handler.h.params, e.d.Renamed)
	return nil, fmt.Sprintf("bad arguments for %s: %s. It takes: %s", e.d.Name, strings.Join(problems, "; "), toolschema.DescribeParams(e.d.InputSchema(), e.d.Handler.h.params))
}

func first(s []string) string {
	if len(s) == 0 {
		return "name"
	}
	return s[0]
}
