package toolschema

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileInput compiles input schema raw of tool name for validating its
// arguments; santhosh-tekuri/jsonschema, because its errors are typed by
// kind, which lets the registry say what is wrong argument by argument.
func CompileInput(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, fmt.Errorf("input schema must be an object schema")
	}
	s, err := compileDoc("tool:"+name, doc)
	if err != nil {
		return nil, fmt.Errorf("invalid input schema: %w", err)
	}
	return s, nil
}

// compileDoc compiles the decoded schema doc, known by url.
func compileDoc(url string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
