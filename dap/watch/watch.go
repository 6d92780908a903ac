// Package watch keeps a debug session's watchpoints (data breakpoints):
// their ids, what each watches and how, the adapter's data id and answer,
// and what each one's memory held at the last stop, by which a stop is
// told to be a watchpoint's when the adapter does not say. Data ids are
// the adapter's for one session, so a set ends with its session. It sends
// nothing and knows nothing of sessions.
package watch

import (
	"fmt"
	"slices"
	"strings"
	"sync"

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
	adapterID   int
	// memory reads what it watches from any frame (delve's data id ends
	// in *(*[N]byte)(ADDR)), "" where there is no such expression; last is
	// what it read at the last stop.
	memory, last string
}

// memoryOf is the expression that reads a watchpoint's memory from any
// frame: delve's data id is "goroutine,frame,expression", and for a
// variable the expression is *(*[N]byte)(ADDR). "" for any other id.
func memoryOf(dataID string) string {
	parts := strings.SplitN(dataID, ",", 3)
	if len(parts) == 3 && strings.HasPrefix(parts[2], "*(*[") {
		return parts[2]
	}
	return ""
}

// Set is a session's watchpoints: their data ids are the adapter's for
// that session, so they end with it. Safe for concurrent use.
type Set struct {
	mu   sync.Mutex
	list []Watchpoint
	next int
}

// All returns a copy of the list.
func (ws *Set) All() []Watchpoint {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.Clone(ws.list)
}

// newID numbers a new watchpoint: w1, w2, ...
func (ws *Set) newID() string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.next++
	return fmt.Sprintf("w%d", ws.next)
}

// New is a watchpoint on name, numbered next, with the adapter's
// description and data id; read gives what its memory holds now.
func (ws *Set) New(name, description, access, dataID string, read func(expr string) string) Watchpoint {
	w := Watchpoint{ID: ws.newID(), Name: name, Description: description, Access: access, dataID: dataID, memory: memoryOf(dataID)}
	w.last = read(w.memory)
	return w
}

// Requests is list as a setDataBreakpoints request sends it.
func Requests(list []Watchpoint) []map[string]any {
	bps := make([]map[string]any, 0, len(list))
	for _, w := range list {
		bps = append(bps, map[string]any{"dataId": w.dataID, "accessType": w.Access})
	}
	return bps
}

// Answered records the adapter's answer to the setDataBreakpoints that
// sent list, which becomes the set's; it returns the list.
func (ws *Set) Answered(list []Watchpoint, got []godap.Breakpoint) []Watchpoint {
	for i := range list {
		if i < len(got) {
			list[i].Verified, list[i].Message, list[i].adapterID = got[i].Verified, got[i].Message, got[i].Id
		}
	}
	ws.mu.Lock()
	ws.list = list
	ws.mu.Unlock()
	return list
}

// Fired reads (read), at a stop, what each watchpoint holds, and says
// which fired: those the adapter named (adapterIDs, the stop's
// hitBreakpointIds), else those
// whose memory changed since the last stop. unchanged: every watchpoint
// watches writes and could be read, and none changed, so no watchpoint
// fired, whatever the stop's reason says. (delve can label a line
// breakpoint's stop a data breakpoint once a watchpoint exists: a debug
// status bit from an earlier hit is read for this one.)
func (ws *Set) Fired(adapterIDs []int, read func(expr string) string) (fired []string, unchanged bool) {
	list := ws.All()
	if len(list) == 0 {
		return nil, false
	}
	unchanged = true
	for i, w := range list {
		now := read(w.memory)
		switch {
		case w.adapterID != 0 && slices.Contains(adapterIDs, w.adapterID):
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
