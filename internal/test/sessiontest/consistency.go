package sessiontest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// countPhrase is a count the text states: a number, then the word it counts
// ("3 matches", "1 file changed").
var countPhrase = regexp.MustCompile(`(?:^|[^\w.:/#@-])(\d+) ([a-z][a-z_]*)`)

// units are words after a number that measure rather than count: a result
// need not carry every duration or size it mentions.
var units = map[string]bool{
	"ms": true, "s": true, "sec": true, "second": true, "seconds": true, "minute": true, "minutes": true,
	"min": true, "h": true, "hour": true, "hours": true, "day": true, "days": true, "ago": true,
	"byte": true, "bytes": true, "b": true, "kib": true, "mib": true, "gib": true, "kb": true, "mb": true, "gb": true,
	"character": true, "characters": true, "chars": true, "x": true, "of": true, "to": true, "and": true, "or": true,
	"in": true, "at": true, "is": true, "was": true, "the": true, "on": true, "for": true, "by": true, "if": true,
	"then": true, "else": true, "return": true, "with": true, "as": true, "from": true, "not": true, "more": true,
	"less": true, "times": true, "levels": true, "deep": true, "percent": true,
}

// Unsaid lists the counts the text states that the structured content does
// not carry: a program reading structuredContent must learn what the agent
// reads. A count is carried when the structured content holds that number,
// a list or object of that many entries, or a string that states it. Code
// quoted in the text (a line of source after a tab or a line number) is not
// read for counts.
func Unsaid(res *mcp.CallToolResult) []string {
	text, structured := registry.ResultText(res), res.StructuredContent
	if structured == nil {
		return nil
	}
	b, err := json.Marshal(structured)
	if err != nil {
		return []string{fmt.Sprintf("structured content is not JSON: %v", err)}
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	have := map[int]bool{}
	var strs strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case float64:
			if x == math.Trunc(x) {
				have[int(x)] = true
			}
		case string:
			strs.WriteString(x)
			strs.WriteByte('\n')
		case []any:
			have[len(x)] = true
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			have[len(x)] = true
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	own := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcp.TextContent); ok {
			own = tc.Text // the tool's own block: reports follow it
		}
	}
	if m, ok := v.(map[string]any); ok && statedLines(own) >= 8 {
		if bare := bareOf(m, len(own)); bare != "" {
			return []string{fmt.Sprintf("the text has %d lines of content, the structured content only %s", statedLines(own), bare)}
		}
	}
	for _, m := range regexp.MustCompile(`\d+`).FindAllString(strs.String(), -1) {
		if n, err := strconv.Atoi(m); err == nil {
			have[n] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if quoted(line) {
			continue
		}
		for _, m := range countPhrase.FindAllStringSubmatch(line, -1) {
			word := m[2]
			if units[word] {
				continue
			}
			n, err := strconv.Atoi(m[1])
			if err != nil || have[n] {
				continue
			}
			phrase := m[1] + " " + word
			if !seen[phrase] {
				seen[phrase] = true
				out = append(out, fmt.Sprintf("%q (in %q)", phrase, strings.TrimSpace(line)))
			}
		}
	}
	return out
}

// quoted says whether a line of a result quotes source or output rather
// than stating a fact: a numbered source line, a diff line, a notice cut
// by the registry.
var quotedLine = regexp.MustCompile(`^(\s*\d+[\t:│|]|[+-][^+-]|@@|>|\$ |\[cut: )`)

func quoted(line string) bool {
	return quotedLine.MatchString(line) || strings.Contains(line, "\t")
}

// bareOf describes structured content that carries little of what a text
// of own characters said at length: no entry in any list, and its strings
// (reports aside) hold under a quarter of the text's characters. It
// returns "" when the content has substance.
func bareOf(m map[string]any, own int) string {
	chars, lists := 0, false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			chars += len(x)
		case []any:
			lists = lists || len(x) > 0
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for k, e := range m {
		if k != "reports" {
			walk(e)
		}
	}
	if lists || 4*chars >= own {
		return ""
	}
	b, _ := json.Marshal(m)
	return textcutRunes(string(b), 120)
}

// statedLines counts the lines of the text that are not blank.
func statedLines(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

func textcutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
