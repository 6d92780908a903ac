package dap

import (
	"context"
	"fmt"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	godap "github.com/google/go-dap"
)

// setFunctionBreakpoints sends the whole list (DAP's request replaces it)
// and records the adapter's answer.
func (sess *Session) setFunctionBreakpoints(ctx context.Context) error {
	fs := sess.bps.Funcs()
	if !sess.caps.SupportsFunctionBreakpoints {
		if len(fs) == 0 {
			return nil
		}
		return adapter.BadArg("%s does not support function breakpoints (its initialize answer has no supportsFunctionBreakpoints); remove them (breakpoints with functions: []) and break on a line with file and lines", sess.Spec.ID)
	}
	list := make([]map[string]any, 0, len(fs))
	sent := make([]string, len(fs))   // the name each was sent as
	shared := make([]string, len(fs)) // why one was not sent
	byName := map[string]string{}     // a name sent → the breakpoint
	for i, f := range fs {
		name, cond := f.Name, f.Condition
		name, cond = sess.Spec.Adapter.Function(sess.target, name, cond)
		if other, ok := byName[name]; ok {
			// pydevd keeps one breakpoint per bare name: the last would
			// silently replace the first.
			shared[i] = fmt.Sprintf("%s keeps one function breakpoint per function name, and %s already breaks on %s; remove one of them, or break on this one's line (file and lines)", sess.Spec.ID, other, name)
			continue
		}
		byName[name] = f.ID + " (" + f.Name + ")"
		sent[i] = name
		m := map[string]any{"name": name}
		if cond != "" && sess.caps.SupportsConditionalBreakpoints {
			m["condition"] = cond
		}
		if f.HitCondition != "" && sess.caps.SupportsHitConditionalBreakpoints {
			m["hitCondition"] = f.HitCondition
		}
		list = append(list, m)
	}
	var body godap.SetFunctionBreakpointsResponseBody
	if err := sess.call(ctx, "setFunctionBreakpoints", map[string]any{"breakpoints": list}, &body); err != nil {
		return fmt.Errorf("setting function breakpoints: %v", err)
	}
	sess.bps.FuncsAnswered(sent, shared, body.Breakpoints, sess.caps.support(), sess.placed)
	return nil
}

// placed is where the adapter put a function breakpoint; a file outside
// the root is left unnamed.
func (sess *Session) placed(g godap.Breakpoint) (string, int) {
	if g.Source != nil && g.Source.Path != "" && sess.guard != nil {
		if abs, err := sess.guard.Resolve(g.Source.Path); err == nil {
			return sess.guard.Rel(abs), g.Line
		}
	}
	return "", 0
}
