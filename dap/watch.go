package dap

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
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
	adapterID   int
	// memory reads what it watches from any frame (delve's data id ends
	// in *(*[N]byte)(ADDR)), "" where there is no such expression; last is
	// what it read at the last stop.
	memory, last string
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
	list := sess.watches.all()
	if remove {
		i := slices.IndexFunc(list, func(w Watchpoint) bool { return w.Name == name })
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
		list = slices.DeleteFunc(list, func(w Watchpoint) bool { return w.Name == name })
		w := Watchpoint{ID: sess.watches.newID(), Name: name, Description: info.Description, Access: access, dataID: id, memory: watchMemory(id)}
		w.last = sess.stack.Memory(ctx, w.memory)
		list = append(list, w)
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
			list[i].Verified, list[i].Message, list[i].adapterID = body.Breakpoints[i].Verified, body.Breakpoints[i].Message, body.Breakpoints[i].Id
		}
	}
	sess.watches.replace(list)
	return &WatchResult{Session: sess.Info(), Watchpoints: nonNil(list)}, nil
}

// watchMemory is the expression that reads a watchpoint's memory from any
// frame: delve's data id is "goroutine,frame,expression", and for a
// variable the expression is *(*[N]byte)(ADDR). "" for any other id.
func watchMemory(dataID string) string {
	parts := strings.SplitN(dataID, ",", 3)
	if len(parts) == 3 && strings.HasPrefix(parts[2], "*(*[") {
		return parts[2]
	}
	return ""
}

// watchSet is a session's watchpoints: their data ids are the adapter's
// for that session, so they end with it. Safe for concurrent use.
type watchSet struct {
	mu   sync.Mutex
	list []Watchpoint
	next int
}

// all returns a copy of the list.
func (ws *watchSet) all() []Watchpoint {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.Clone(ws.list)
}

// newID numbers a new watchpoint: w1, w2, ...
func (ws *watchSet) newID() string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.next++
	return fmt.Sprintf("w%d", ws.next)
}

// replace sets the list the adapter was sent.
func (ws *watchSet) replace(list []Watchpoint) {
	ws.mu.Lock()
	ws.list = list
	ws.mu.Unlock()
}

// fired reads (read), at stop st, what each watchpoint holds, and says
// which fired: those the adapter named (hitBreakpointIds), else those
// whose memory changed since the last stop. unchanged: every watchpoint
// watches writes and could be read, and none changed, so no watchpoint
// fired, whatever the stop's reason says. (delve can label a line
// breakpoint's stop a data breakpoint once a watchpoint exists: a debug
// status bit from an earlier hit is read for this one.)
func (ws *watchSet) fired(st *Stop, read func(expr string) string) (fired []string, unchanged bool) {
	list := ws.all()
	if len(list) == 0 {
		return nil, false
	}
	unchanged = true
	for i, w := range list {
		now := read(w.memory)
		switch {
		case w.adapterID != 0 && slices.Contains(st.adapterBPs, w.adapterID):
			fired = append(fired, w.ID)
			unchanged = false
		case now == "" || w.last == "" || w.Access != "write":
			unchanged = false
		case now != w.last:
			fired = append(fired, w.ID)
			unchanged = false
		}
		list[i].last = now
	}
	if len(fired) == 0 && len(list) == 1 && (list[0].memory == "" || list[0].last == "") {
		// The only watchpoint, and nothing to tell by: it is the one.
		fired = []string{list[0].ID}
	}
	ws.mu.Lock()
	for _, w := range list {
		if i := slices.IndexFunc(ws.list, func(x Watchpoint) bool { return x.ID == w.ID }); i >= 0 {
			ws.list[i].last = w.last
		}
	}
	ws.mu.Unlock()
	return fired, unchanged
}
