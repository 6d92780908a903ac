package dap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/dapclient"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// SetVariable sets name to value (an expression in the program's
// language) in the container ref (from this stop: a scope's or a
// variable's), or without ref in the frame's first scope (its locals; the
// frame the stop showed unless frame is given). It sends setVariable, or
// setExpression where the adapter has only that, then reads the variable
// back. The set runs the value's expression in the program, so it is
// bounded like evaluate (wait; R11): past it pause is sent, and one that
// still runs is said and makes the next evaluate or set_variable refused
// at once.
func (s *Supervisor) SetVariable(ctx context.Context, r, frame, name, value string, wait time.Duration) (*result.SetVarResult, error) {
	sess, err := s.runnable("set a variable")
	if err != nil {
		return nil, err
	}
	st, err := sess.currentStop()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		return nil, adapter.BadArg("set_variable needs name (a variable of the stop's locals, or of reference) and value")
	}
	if r != "" && frame != "" {
		return nil, adapter.BadArg("set_variable takes reference (the container the variable is in) or frame_id (its locals), not both")
	}
	if busy := sess.busy.note(); busy != "" {
		return nil, adapter.BadArg("%s; a set_variable would wait behind it: wait and call set_variable again, or terminate the session", busy)
	}
	fid := 0
	if frame != "" {
		if fid, err = sess.parseRef("frame_id", frame); err != nil {
			return nil, err
		}
	} else {
		fid, _, _ = sess.shownFrame(ctx, st)
	}
	vref := 0
	if r != "" {
		if vref, err = sess.parseRef("reference", r); err != nil {
			return nil, err
		}
	} else if vref, err = sess.stack.LocalsRef(ctx, fid); err != nil {
		return nil, fmt.Errorf("scopes: %v", err)
	}
	lookup := func(in int) *stack.Var {
		if in == 0 {
			return nil
		}
		vars, _, _, err := sess.stack.Children(ctx, st.N, in, 1000, true)
		if err != nil {
			return nil
		}
		for i := range vars {
			if vars[i].Name == name {
				return &vars[i]
			}
		}
		return nil
	}
	before := lookup(vref)
	res := &result.SetVarResult{Name: name}
	if vref != 0 {
		res.Ref = stack.Ref(vref, st.N)
	}
	var body godap.SetVariableResponseBody
	var args map[string]any
	switch {
	case sess.caps.SupportsSetVariable && vref != 0:
		res.Request = "setVariable"
		args = map[string]any{"variablesReference": vref, "name": name, "value": value}
	case sess.caps.SupportsSetExpression:
		res.Request = "setExpression"
		args = map[string]any{"expression": name, "value": value, "frameId": fid}
	case !sess.caps.SupportsSetVariable:
		return nil, adapter.BadArg("%s sets no variables (its initialize answer has neither supportsSetVariable nor supportsSetExpression); evaluate an assignment instead", sess.Spec.ID)
	default:
		return nil, adapter.BadArg("the frame has no scope to set %s in; pass reference (from scopes)", name)
	}
	d := s.cfg.waitFor(wait)
	late, still, err := sess.bounded(ctx, st, res.Request, args, &body, d, "set_variable ("+name+" = "+textcut.Ellipsis(value, 60)+")")
	if still {
		res.TimedOut = true
		res.Note = fmt.Sprintf("setting %s did not finish within %s; pause was sent and the value's expression still runs (in the program, or in %s itself), so the next evaluate or set_variable would wait behind it (a timeout_seconds up to %s waits longer); terminate ends the session and the program",
			name, d.Round(time.Millisecond), sess.Spec.ID, s.cfg.MaxResumeWait)
		res.Session = sess.Info()
		return res, nil
	}
	if errors.Is(err, dapclient.ErrClosed) {
		return nil, sess.closedError()
	}
	if err != nil {
		var re *dapclient.ResponseError
		if errors.As(err, &re) {
			return nil, adapter.BadArg("%s refused to set %s to %s: %s", sess.Spec.ID, name, value, re.Said())
		}
		return nil, err
	}
	// Read back, as the adapter now has it: in the locals, from a fresh
	// scopes request (delve keeps a reference's children as they were
	// when it was made).
	back := vref
	if r == "" && vref != 0 {
		if fresh, err := sess.stack.LocalsRef(ctx, fid); err == nil && fresh != 0 {
			back = fresh
		}
	}
	res.Value = lookup(back)
	lateNote := ""
	if late {
		lateNote = fmt.Sprintf("it ran past the %s bound; pause was sent and then it ended", d.Round(time.Millisecond))
	}
	if before != nil && res.Value != nil && before.Value == res.Value.Value && res.Value.Value != strings.TrimSpace(value) {
		res.Note = fmt.Sprintf("%s kept its value %s: %s accepted the request and did not change it (check value evaluates here, with evaluate)", name, before.Value, sess.Spec.ID)
	}
	if res.Value != nil && body.Value != "" && res.Value.Value != body.Value && res.Note == "" {
		res.Note = fmt.Sprintf("%s answered %s = %s, but reading it back gives %s", sess.Spec.ID, name, textcutShort(body.Value), res.Value.Value)
		if r != "" {
			res.Note += " (an adapter may keep a reference's children as they were when it was made: call scopes again for fresh ones)"
		}
	}
	if res.Value == nil {
		v := stack.NewVar(name, body.Value, body.Type, body.VariablesReference, body.NamedVariables, body.IndexedVariables, st.N)
		res.Value = &v
		res.Note = "not found again among " + res.Ref + "'s children; shown is the adapter's answer to " + res.Request
	}
	if lateNote != "" {
		res.Note = strings.TrimPrefix(res.Note+"; "+lateNote, "; ")
	}
	res.Session = sess.Info()
	return res, nil
}

func textcutShort(s string) string {
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}
