package broker

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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
	children := procChildren()
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
		row.MemoryKB = treeRSSKB(row.PID, children)
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
	children := procChildren()
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
		rss := treeRSSKB(be.proc.Pid(), children)
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

// procChildren maps each process to its children, from /proc (nil
// where there is none).
func procChildren() map[int][]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the command name, which may hold spaces and parentheses:
		// the state, then the parent's pid.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat)[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	return children
}

// treeRSSKB is the resident memory of pid and every process under it.
func treeRSSKB(pid int, children map[int][]int) int64 {
	total := rssKB(pid)
	if total == 0 {
		return 0
	}
	seen := map[int]bool{pid: true}
	queue := slices.Clone(children[pid])
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		total += rssKB(c)
		queue = append(queue, children[c]...)
	}
	return total
}

// rssKB is a process's resident memory from /proc, 0 when unknown.
func rssKB(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}
