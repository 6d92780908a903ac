package dap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	godap "github.com/google/go-dap"
)

// Watchpoint is a data breakpoint: the program stops when a variable is
// written (or read). Its data id is the adapter's for this session, so
// watchpoints end with the session.
type Watchpoint struct {
	ID          string `json:"id" jsonschema:"w1, w2, ..."`
	Name        string `json:"name"`
	Description string `json:"description,omitempty" jsonschema:"the adapter's name for what is watched"`
	Access      string `json:"access" jsonschema:"write, read or readWrite"`
	Verified    bool   `json:"verified"`
	Message     string `json:"message,omitempty"`
	dataID      string
}

// WatchResult is the session's watchpoints after a change.
type WatchResult struct {
	Session     SessionInfo  `json:"session"`
	Watchpoints []Watchpoint `json:"watchpoints"`
}

// Watch adds a watchpoint on name in the container ref (from this stop;
// default the locals of the frame the stop showed), or with remove drops
// the one on name. Only where the adapter advertises
// supportsDataBreakpoints.
func (s *Supervisor) Watch(ctx context.Context, r, name, access string, remove bool) (*WatchResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	if err := sess.readOnly("watch a variable"); err != nil {
		return nil, err
	}
	if !sess.caps.SupportsDataBreakpoints {
		return nil, badArg("%s has no data breakpoints (its initialize answer has no supportsDataBreakpoints); break on the lines that change %s instead", sess.Spec.ID, name)
	}
	if strings.TrimSpace(name) == "" {
		return nil, badArg("watch needs name: a variable of the stop's locals, or of reference")
	}
	if access == "" {
		access = "write"
	}
	if !slices.Contains([]string{"write", "read", "readWrite"}, access) {
		return nil, badArg("access %q: use write, read or readWrite", access)
	}
	sess.mu.Lock()
	list := slices.Clone(sess.watches)
	sess.mu.Unlock()
	if remove {
		i := slices.IndexFunc(list, func(w Watchpoint) bool { return w.Name == name })
		if i < 0 {
			return nil, badArg("no watchpoint on %s to remove", name)
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
			var scopes godap.ScopesResponseBody
			if err := sess.call(ctx, "scopes", map[string]any{"frameId": fid}, &scopes); err != nil {
				return nil, fmt.Errorf("scopes: %v", err)
			}
			for _, sc := range scopes.Scopes {
				if !sc.Expensive && sc.VariablesReference != 0 {
					vref = sc.VariablesReference
					break
				}
			}
		}
		var info godap.DataBreakpointInfoResponseBody
		if err := sess.call(ctx, "dataBreakpointInfo", map[string]any{"variablesReference": vref, "name": name}, &info); err != nil {
			return nil, badArg("%s cannot watch %s: %v", sess.Spec.ID, name, err)
		}
		id, _ := info.DataId.(string)
		if id == "" {
			return nil, badArg("%s cannot watch %s: %s", sess.Spec.ID, name, info.Description)
		}
		if len(info.AccessTypes) > 0 && !slices.Contains(info.AccessTypes, godap.DataBreakpointAccessType(access)) {
			return nil, badArg("%s watches %s only for %v, not %s", sess.Spec.ID, name, info.AccessTypes, access)
		}
		list = slices.DeleteFunc(list, func(w Watchpoint) bool { return w.Name == name })
		sess.mu.Lock()
		sess.nextWatch++
		n := sess.nextWatch
		sess.mu.Unlock()
		list = append(list, Watchpoint{ID: fmt.Sprintf("w%d", n), Name: name, Description: info.Description, Access: access, dataID: id})
	}
	bps := make([]map[string]any, 0, len(list))
	for _, w := range list {
		bps = append(bps, map[string]any{"dataId": w.dataID, "accessType": w.Access})
	}
	var body godap.SetDataBreakpointsResponseBody
	if err := sess.call(ctx, "setDataBreakpoints", map[string]any{"breakpoints": bps}, &body); err != nil {
		return nil, fmt.Errorf("setting watchpoints: %v", err)
	}
	for i := range list {
		if i < len(body.Breakpoints) {
			list[i].Verified, list[i].Message = body.Breakpoints[i].Verified, body.Breakpoints[i].Message
		}
	}
	sess.mu.Lock()
	sess.watches = list
	sess.mu.Unlock()
	return &WatchResult{Session: sess.Info(), Watchpoints: nonNil(list)}, nil
}
