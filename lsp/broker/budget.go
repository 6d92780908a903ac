package broker

import (
	"slices"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// Servers is the broker's answer to $/builtintools/servers: every server
// it holds, for a process's lsp status.
type Servers struct {
	BudgetKB int64    `json:"budget_kb"`
	Servers  []Server `json:"servers"`
}

// Server is one server of the broker.
type Server struct {
	Server   string `json:"server"`
	Dir      string `json:"dir"`
	Trusted  bool   `json:"trusted"`
	PID      int    `json:"pid"`
	MemoryKB int64  `json:"memory_kb"`
	Clients  int    `json:"clients"` // connections: one per process
	State    string `json:"state"`   // in_use, previewing or idle
	IdleMS   int64  `json:"idle_ms"` // since its last use
}

// servers lists the broker's live servers.
func (b *broker) servers() Servers {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := Servers{BudgetKB: b.budgetKB, Servers: []Server{}}
	children := proc.ChildMap()
	for _, be := range b.backends {
		be.mu.Lock()
		row := Server{Server: be.hello.Server, Dir: be.hello.Dir, Trusted: be.hello.Trusted, PID: be.proc.Pid(),
			Clients: len(be.clients), State: "idle", IdleMS: time.Since(be.lastUse).Milliseconds()}
		switch {
		case be.hold != nil:
			row.State = "previewing"
		case len(be.pending) > 0 || be.initWaiting || len(be.progress) > 0:
			row.State = "in_use"
		}
		live := be.alive() && !be.idleStop
		be.mu.Unlock()
		if !live {
			continue
		}
		row.MemoryKB = proc.TreeRSSKB(row.PID, children)
		out.Servers = append(out.Servers, row)
	}
	slices.SortFunc(out.Servers, func(x, y Server) int { return strings.Compare(x.Dir+x.Server, y.Dir+y.Server) })
	return out
}

// makeRoomLocked keeps the broker's servers within limitKB before a new
// one starts (LSP-8, over every process's servers): while their resident
// memory, each counted with its children, is at or over the budget, the
// least recently used idle one (no call at it, no hold, no loading) is
// stopped, its clients told so as of an idle stop (no crash noted; their
// next call starts it again). Called with b.mu held.
func (b *broker) makeRoomLocked(limitKB int64) {
	if limitKB <= 0 {
		return
	}
	type candidate struct {
		be  *backend
		rss int64
	}
	children := proc.ChildMap()
	var used int64
	var idle []candidate
	for _, be := range b.backends {
		be.mu.Lock()
		live := be.alive() && !be.idleStop
		free := len(be.pending) == 0 && be.hold == nil && !be.initWaiting && len(be.progress) == 0
		be.mu.Unlock()
		if !live {
			continue
		}
		rss := proc.TreeRSSKB(be.proc.Pid(), children)
		used += rss
		if free {
			idle = append(idle, candidate{be, rss})
		}
	}
	slices.SortFunc(idle, func(x, y candidate) int { return x.be.lastUsed().Compare(y.be.lastUsed()) })
	for _, c := range idle {
		if used < limitKB {
			return
		}
		c.be.stopUnused("stopped by the broker for the memory budget of its servers")
		used -= c.rss
	}
}
