// Package toolschema holds a tool's JSON Schemas as its Go types give them:
// the input schema of a params struct (Input; enum tags and WithEnum's
// choices), the output schema of a result type (Output, with the reports
// the registry adds to every result), the result made to fit that schema
// before it is published (WithoutNulls: no nil list or map written as
// null, REG-12), and what a schema requires of a JSON value: the compiled
// input schema arguments are validated against (CompileInput) and the
// check a strict MCP client makes of a result (CheckResult).
//
// It knows nothing of runs, calls or peers; package registry builds a
// tool's handler on it.
package toolschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Report is what a wrapper adds to a call's result — diagnostics after a
// write, a re-index that failed — as text for the agent and data for a
// program. The registry appends the text to the result's content and the
// report to its structured content's "reports" (many tools already have a
// "notes" of their own), which Output declares on every result.
type Report struct {
	Kind string         `json:"kind" jsonschema:"what added it: diagnostics, code_graph"`
	Text string         `json:"text" jsonschema:"what the agent reads"`
	Data map[string]any `json:"data,omitempty" jsonschema:"the same as data, when there is any"`
}

// Input is the JSON Schema of params struct P and its argument names,
// sorted: json tags name the arguments, a field without omitempty is
// required, the jsonschema tag describes it and an enum:"a,b" tag lists
// its choices.
func Input[P any]() (json.RawMessage, []string, error) {
	schema, err := jsonschema.For[P](&jsonschema.ForOptions{})
	if err != nil {
		return nil, nil, err
	}
	dropNullTypes(schema)
	addEnums(reflect.TypeFor[P](), schema)
	var params []string
	for k := range schema.Properties {
		params = append(params, k)
	}
	slices.Sort(params)
	raw, err := json.Marshal(schema)
	return raw, params, err
}

// Output is the JSON Schema of result type R's JSON form, MCP's
// outputSchema: an object, with a "reports" property of Reports.
func Output[R any]() (json.RawMessage, error) {
	schema, err := jsonschema.For[R](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	dropNullTypes(schema)
	if schema.Type != "object" {
		return nil, fmt.Errorf("a result must be a struct (MCP's outputSchema is an object); got %s", schema.Type)
	}
	if _, taken := schema.Properties["reports"]; taken {
		return nil, fmt.Errorf("a result may not have a field named reports: the registry puts wrappers' reports there")
	}
	reports, err := jsonschema.For[[]Report](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	dropNullTypes(reports)
	// A free-form object, said as one: an empty schema reads as "anything".
	reports.Items.Properties["data"] = &jsonschema.Schema{Type: "object", Description: "the same as data, when there is any"}
	reports.Description = "what ran after the tool added (diagnostics after a write, a code graph re-index that failed)"
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	schema.Properties["reports"] = reports
	return json.Marshal(schema)
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
	for _, d := range s.Defs {
		dropNullTypes(d)
	}
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

// WithEnum returns input schema in with the choices of argument arg set to
// values (and listed after its description), for choices a table builds at
// init rather than a struct tag.
func WithEnum(in json.RawMessage, arg string, values []string) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(in, &doc); err != nil {
		return nil, err
	}
	props, _ := doc["properties"].(map[string]any)
	p, ok := props[arg].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no argument %q", arg)
	}
	p["enum"] = values
	if d, ok := p["description"].(string); ok {
		p["description"] = d + ": " + strings.Join(values, ", ")
	}
	return json.Marshal(doc)
}
