package dap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/watch"
)

// Watch adds a watchpoint on name in the container ref (from this stop;
// default the locals of the frame the stop showed), or with remove drops
// the one on name. Only where the adapter advertises
// supportsDataBreakpoints.
func (s *Supervisor) Watch(ctx context.Context, r, name, access string, remove bool) (*result.WatchResult, error) {
	sess, err := s.runnable("watch a variable")
	if err != nil {
		return nil, err
	}
	if !sess.caps.SupportsDataBreakpoints {
		return nil, adapter.BadArg("%s has no data breakpoints (its initialize answer has no supportsDataBreakpoints); break on the lines that change %s instead", sess.Spec.ID, name)
	}
	if fires, why := adapter.HardwareWatchpoints(); sess.Spec.HardwareWatch && !fires && !remove {
		return nil, adapter.BadArg("%s's watchpoints are the CPU's, and %s: a watch on %s would never stop the program. Break on the lines that change %s instead (a breakpoint with a condition, or run_to_line)", sess.Spec.ID, why, name, name)
	}
	if strings.TrimSpace(name) == "" {
		return nil, adapter.BadArg("watch needs name: a variable of the stop's locals, or of reference")
	}
	if access == "" {
		access = "write"
	}
	if !slices.Contains([]string{"write", "read", "readWrite"}, access) {
		return nil, adapter.BadArg("access %q: use write, read or readWrite", access)
	}
	list := sess.watches.All()
	if remove {
		i := slices.IndexFunc(list, func(w watch.Watchpoint) bool { return w.Name == name })
		if i < 0 {
			return nil, adapter.BadArg("no watchpoint on %s to remove", name)
		}
		list = slices.Delete(list, i, i+1)
	} else {
		st, err := sess.currentStop()
		if err != nil {
			return nil, err
		}
		vref := 0
		if r != "" {
			if vref, err = sess.parseRef("reference", r); err != nil {
				return nil, err
			}
		} else if fid, f, _ := sess.shownFrame(ctx, st); f != nil {
			if vref, err = sess.stack.LocalsRef(ctx, fid); err != nil {
				return nil, fmt.Errorf("scopes: %v", err)
			}
		}
		var info godap.DataBreakpointInfoResponseBody
		if err := sess.call(ctx, "dataBreakpointInfo", map[string]any{"variablesReference": vref, "name": name}, &info); err != nil {
			return nil, adapter.BadArg("%s cannot watch %s: %v", sess.Spec.ID, name, err)
		}
		id, _ := info.DataId.(string)
		if id == "" {
			return nil, adapter.BadArg("%s cannot watch %s: %s", sess.Spec.ID, name, info.Description)
		}
		if len(info.AccessTypes) > 0 && !slices.Contains(info.AccessTypes, godap.DataBreakpointAccessType(access)) {
			return nil, adapter.BadArg("%s watches %s only for %v, not %s", sess.Spec.ID, name, info.AccessTypes, access)
		}
		list = slices.DeleteFunc(list, func(w watch.Watchpoint) bool { return w.Name == name })
		list = append(list, sess.watches.New(name, info.Description, access, id, func(expr string) string { return sess.stack.Memory(ctx, expr) }))
	}
	var body godap.SetDataBreakpointsResponseBody
	if err := sess.call(ctx, "setDataBreakpoints", map[string]any{"breakpoints": watch.Requests(list)}, &body); err != nil {
		return nil, fmt.Errorf("setting watchpoints: %v", err)
	}
	list = sess.watches.Answered(list, body.Breakpoints)
	return &result.WatchResult{Session: sess.Info(), Watchpoints: result.NonNil(list)}, nil
}
