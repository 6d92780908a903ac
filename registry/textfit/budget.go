// Package textfit sizes a tool result's text to its output budget (REG-12):
// what is left for a body after its headers, equal parts and shares of it,
// and text cut at its middle or its end with a note saying what was left
// out; and the cut of a whole result that still passes it, the registry's
// backstop. It knows nothing of runs or calls; registry.Call.Budget gives a
// call's.
package textfit

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/mark3labs/mcp-go/mcp"
)

// Budget is one result's output budget in characters (REG-12). Every tool
// sizes its text by it, the same way: Reserve for what the result says
// besides its body, Split and Share for parts that share one result, Fits
// to ask, HeadTail for a body whose end matters and Head for a list whose
// start does. The registry cuts whatever still passes the run's budget,
// with a note, as a backstop.
type Budget int

// minBody is the least any body gets, however small the budget: a result
// with no room for its body would say nothing true.
const minBody = 40

// Chars is the budget as a count of characters.
func (b Budget) Chars() int { return int(b) }

// Reserve is what is left for a result's body after n characters of
// headers and notes: b-n, but never under a quarter of b nor under 40, so
// a tiny budget still shows a body (the registry's cut then keeps the
// whole result within the run's budget).
func (b Budget) Reserve(n int) Budget {
	return Budget(max(int(b)-n, int(b)/4, minBody))
}

// HeadTail fits s into the budget by leaving out its middle — two thirds
// of the room for its start, one for its end — and says where, with
// what (more) says about getting the rest ("the whole output is in F");
// s itself when it fits.
func (b Budget) HeadTail(s, more string) string {
	head, tail, cut := textcut.HeadTail(s, max(int(b), minBody))
	if cut == 0 {
		return s
	}
	note := fmt.Sprintf("\n[… %d characters left out here", cut)
	if more != "" {
		note += "; " + more
	}
	return head + note + "]\n" + tail
}

// Fits reports whether s, counted in characters, fits the budget.
func (b Budget) Fits(s string) bool { return utf8.RuneCountInString(s) <= int(b) }

// Split is one of n equal parts' share of the budget (n workers' answers in
// one result): b/n, never under 40. Reserve on the share then leaves room
// for what each part says besides its body.
func (b Budget) Split(n int) Budget {
	return Budget(max(int(b)/max(n, 1), minBody))
}

// Share divides the budget among parts of the given sizes in characters
// (a cell's output, result and error): no part gets more than its size,
// the smallest are served first, and what one leaves goes to the rest, so
// short parts show whole and the long ones share what remains. A size of
// 0 gets 0.
func (b Budget) Share(sizes []int) []Budget {
	out := make([]Budget, len(sizes))
	var idx []int
	for i, n := range sizes {
		if n > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(x, y int) int { return sizes[x] - sizes[y] })
	left := max(int(b), 0)
	for k, i := range idx {
		share := min(sizes[i], left/(len(idx)-k))
		out[i] = Budget(share)
		left -= share
	}
	return out
}

// Head fits s into the budget by keeping its start, cut after a whole line,
// followed by note(n), where n is the characters left out (the note says
// what was cut and how to get it); s itself when it fits. For a list whose
// first lines matter most, where HeadTail's end would mislead.
func (b Budget) Head(s string, note func(left int) string) string {
	total := utf8.RuneCountInString(s)
	if total <= int(b) {
		return s
	}
	head := textcut.Runes(s, max(int(b)-utf8.RuneCountInString(note(total)), 0))
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	return head + note(total-utf8.RuneCountInString(head))
}

// Cap cuts the text blocks of res to the budget in all, on a character
// boundary, and says how much was cut (REG-12): the registry's backstop for
// a result its tool did not size. Structured content is bounded by each
// tool's own limits (matches, references, diff size), not here.
func (b Budget) Cap(res *mcp.CallToolResult) {
	budget := int(b)
	total := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			total += utf8.RuneCountInString(t.Text)
		}
	}
	if total <= budget {
		return
	}
	left := budget
	out := res.Content[:0]
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok {
			out = append(out, c)
			continue
		}
		if left <= 0 {
			continue
		}
		if n := utf8.RuneCountInString(t.Text); n > left {
			t.Text = textcut.Runes(t.Text, left)
		}
		left -= utf8.RuneCountInString(t.Text)
		out = append(out, t)
	}
	res.Content = append(out, mcp.NewTextContent(fmt.Sprintf(
		"[cut: this result has %d characters and the run's output budget is %d; ask for less of it]", total, budget)))
}
