package toolschema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/similar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// DescribeParams lists what a tool takes, for a message about bad
// arguments: each of params, its type in the input schema, and whether it
// is required.
func DescribeParams(input json.RawMessage, params []string) string {
	var doc map[string]any
	_ = json.Unmarshal(input, &doc)
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
	for _, p := range params {
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

// Problems says, argument by argument, what ve found wrong with a call's
// arguments, sorted and each once: a missing or unknown argument (with the
// name it has now, from renamed, or the nearest of params), a value of the
// wrong type, a broken constraint.
func Problems(ve *jsonschema.ValidationError, params []string, renamed map[string]string) []string {
	var problems []string
	collect(ve, &problems, params, renamed)
	slices.Sort(problems)
	return slices.Compact(problems)
}

var printer = message.NewPrinter(language.English)

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
			} else if s := similar.Closest(p, params); s != "" && where == "" {
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
