package proc

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// Processes as /proc tells them: the memory the budgets of the
// language-server pool and broker count, and which servers work in a
// folder. Where there is no /proc, every figure is 0 and no process is
// found.

// RSSKB is a process's resident memory in KiB, 0 when unknown.
func RSSKB(pid int) int64 {
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

// ChildMap maps each process to its children (nil where /proc cannot be
// read).
func ChildMap() map[int][]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, ent := range ents {
		child, err := strconv.Atoi(ent.Name())
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
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if parent, err := strconv.Atoi(f[1]); err == nil {
			children[parent] = append(children[parent], child)
		}
	}
	return children
}

// TreeRSSKB is the resident memory of pid and every process under it
// (children from ChildMap): a server's own helpers, such as tsserver under
// typescript-language-server, count toward its memory.
func TreeRSSKB(pid int, children map[int][]int) int64 {
	total := RSSKB(pid)
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
		total += RSSKB(c)
		queue = append(queue, children[c]...)
	}
	return total
}

// Working lists the live processes (a zombie not counting) whose command
// line holds name and whose working folder is dir, or any folder when dir
// is "": the servers a test or a measurement counts in a checkout.
func Working(name, dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if strings.Contains(string(cmdline), name) && (dir == "" || cwd == dir) && !strings.Contains(string(stat), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}
