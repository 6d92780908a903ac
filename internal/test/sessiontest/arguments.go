package sessiontest

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// An argument name quoted in a hint or an error must be one the tool takes
// (issue 19 §3: hints named parameters that did not exist). Argument names
// are snake_case; a snake_case word in a text output is taken for one
// unless it is part of a path or a file name.
var snakeWord = regexp.MustCompile(`(?:^|[^\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b`)

// inName says whether the word ending at end of line goes on as a path
// or a file name (my_module.py, a_dir/).
func inName(line string, end int) bool {
	rest := line[end:]
	if strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "-") {
		return true
	}
	return len(rest) > 1 && rest[0] == '.' && (rest[1] >= 'a' && rest[1] <= 'z' || rest[1] >= 'A' && rest[1] <= 'Z')
}

// argNames are the argument names of each tool, nested ones (an array's
// items, an object's fields) included.
func argNames(tools []mcp.Tool) map[string][]string {
	out := map[string][]string{}
	for _, tool := range tools {
		b, _ := json.Marshal(tool)
		var m struct {
			Input any `json:"inputSchema"`
		}
		json.Unmarshal(b, &m)
		var names []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if props, ok := v["properties"].(map[string]any); ok {
					for k := range props {
						names = append(names, k)
					}
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(m.Input)
		sort.Strings(names)
		out[tool.Name] = slices.Compact(names)
	}
	return out
}

// UnknownArguments returns the snake_case names that text, the output of
// a call of tool (cards shown to the human, "? " lines, left out), quotes and that are neither an argument of tool, nor an
// argument of a tool named on the same line, nor a tool's name, nor one of
// terms (words of the tool's that are not arguments: a status such as
// timed_out).
func UnknownArguments(tools []mcp.Tool, tool, text string, terms []string) []string {
	args := argNames(tools)
	var bad []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "? ") {
			continue // a card: the agent's own question
		}
		known := slices.Clone(args[tool])
		for name, a := range args {
			if strings.Contains(line, name) {
				known = append(known, a...)
			}
		}
		for _, m := range snakeWord.FindAllStringSubmatchIndex(line, -1) {
			w := line[m[2]:m[3]]
			if inName(line, m[3]) {
				continue
			}
			if _, isTool := args[w]; isTool || slices.Contains(known, w) || slices.Contains(terms, w) || slices.Contains(bad, w) {
				continue
			}
			bad = append(bad, w)
		}
	}
	return bad
}
