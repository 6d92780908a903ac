package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/similar"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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

var printer = message.NewPrinter(language.English)

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
	var problems []string
	collect(ve, &problems, e.d.Handler.h.params, e.d.Renamed)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	return nil, fmt.Sprintf("bad arguments for %s: %s. It takes: %s", e.d.Name, strings.Join(problems, "; "), e.describeParams())
}

// describeParams lists what the tool takes, for a message about bad
// arguments: each parameter, its type, and whether it is required.
func (e *entry) describeParams() string {
	var doc map[string]any
	_ = json.Unmarshal(e.d.InputSchema(), &doc)
	req := map[string]bool{}
	if l, ok := doc["required"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				req[s] = true
			}
		}
	}
	props, _ := doc["properties"].(map[string]any)
	var parts []string
	for _, p := range e.d.Handler.h.params {
		typ := ""
		if m, ok := props[p].(map[string]any); ok {
			typ = typeName(m["type"])
		}
		s := p
		if typ != "" {
			s += " (" + typ + ")"
		}
		if req[p] {
			s += " required"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func typeName(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				out = append(out, s)
			}
		}
		return strings.Join(out, " or ")
	}
	return ""
}

func collect(ve *jsonschema.ValidationError, out *[]string, params []string, renamed map[string]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, out, params, renamed)
		}
		return
	}
	where := strings.Join(ve.InstanceLocation, ".")
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			name := m
			if where != "" {
				name = where + "." + m
			}
			*out = append(*out, fmt.Sprintf("missing required argument %q", name))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			msg := fmt.Sprintf("unknown argument %q", p)
			if now, ok := renamed[p]; ok && where == "" {
				msg += fmt.Sprintf(" (it is called %q now)", now)
			} else if s := closest(p, params); s != "" && where == "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			*out = append(*out, msg)
		}
	case *kind.Type:
		// Slices are nullable in generated schemas; null is no advice.
		want := slices.DeleteFunc(slices.Clone(k.Want), func(s string) bool { return s == "null" })
		if len(want) == 0 {
			want = k.Want
		}
		*out = append(*out, fmt.Sprintf("argument %q must be %s, not %s", where, strings.Join(want, " or "), k.Got))
	case *kind.Group, *kind.Schema, *kind.Reference:
		// containers without a leaf of their own
	default:
		if where == "" {
			*out = append(*out, ve.ErrorKind.LocalizedString(printer))
		} else {
			*out = append(*out, fmt.Sprintf("argument %q: %s", where, ve.ErrorKind.LocalizedString(printer)))
		}
	}
}

// closest suggests the known argument nearest to a misspelt one.
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := similar.Distance(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func first(s []string) string {
	if len(s) == 0 {
		return "name"
	}
	return s[0]
}
