package registry

import (
	"fmt"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// Budget is one result's output budget in characters (REG-12). Every tool
// sizes its text by it, the same way: Reserve for what the result says
// besides its body, HeadTail for a body that does not fit. The registry
// cuts whatever still passes the run's budget, with a note, as a backstop.
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
