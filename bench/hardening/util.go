package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// caseErr is what check panics with; runCase turns it into a line.
type caseErr struct{ err error }

func check(err error) {
	if err != nil {
		panic(caseErr{err})
	}
}

// cx is one case's context: its folders and the processes it started.
type cx struct {
	id            string
	base          string
	root, outside string
	mu            sync.Mutex
	servers       []*server
}

// Folders and processes still to clean up, for an interrupt.
var (
	globalMu   sync.Mutex
	tempDirs   = map[string]bool{}
	startedPid = map[int]*os.Process{}
)

func newCx(id string) *cx {
	base, err := os.MkdirTemp("", "hardening-"+strings.ToLower(id)+"-")
	if err != nil {
		fatal(err)
	}
	globalMu.Lock()
	tempDirs[base] = true
	globalMu.Unlock()
	c := &cx{id: id, base: base}
	c.root, c.outside = c.pair("")
	return c
}

// pair makes a fresh root and outside sibling under the case's folder.
func (c *cx) pair(name string) (root, outside string) {
	dir := filepath.Join(c.base, name)
	root, outside = filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	check(os.MkdirAll(root, 0o755))
	check(os.MkdirAll(outside, 0o755))
	return root, outside
}

func (c *cx) cleanup() {
	c.mu.Lock()
	servers := c.servers
	c.mu.Unlock()
	for _, s := range servers {
		s.kill()
	}
	os.RemoveAll(c.base)
	globalMu.Lock()
	delete(tempDirs, c.base)
	globalMu.Unlock()
}

func track(p *os.Process) {
	globalMu.Lock()
	startedPid[p.Pid] = p
	globalMu.Unlock()
}

func untrack(p *os.Process) {
	globalMu.Lock()
	delete(startedPid, p.Pid)
	globalMu.Unlock()
}

func killAll() {
	globalMu.Lock()
	defer globalMu.Unlock()
	for _, p := range startedPid {
		p.Kill()
	}
}

func removeAll() {
	globalMu.Lock()
	defer globalMu.Unlock()
	for d := range tempDirs {
		os.RemoveAll(d)
	}
}

// line prints one measurement.
func (c *cx) line(what, figure, before string) {
	fmt.Printf("%s | %s | %s | before: %s\n", c.id, what, oneLine(figure), before)
}

func (c *cx) logf(format string, a ...any) {
	if verbose {
		fmt.Fprintf(os.Stderr, "[%s] %s\n", c.id, fmt.Sprintf(format, a...))
	}
}

// serverEnv is the environment of server processes: the language servers'
// folders first on PATH, then extra folders before them.
func serverEnv(front ...string) []string {
	dirs := append(append([]string{}, front...), filepath.Join(toolsDir, "bin"), filepath.Join(toolsDir, "node_modules", ".bin"))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+strings.Join(dirs, ":")+":"+os.Getenv("PATH"))
}

// callOut is what one `builtin-tools call` printed.
type callOut struct {
	stdout, stderr string
	code           int
	dur            time.Duration
	timedOut       bool
	err            error
}

// summary is the call's answer as one short string.
func (o callOut) summary(n int) string {
	switch {
	case o.timedOut:
		return fmt.Sprintf("no answer within %d s", int(timeout.Seconds()))
	case o.err != nil:
		return o.err.Error()
	}
	s := strings.TrimSpace(o.stdout)
	if s == "" {
		s = strings.TrimSpace(o.stderr)
	}
	return fmt.Sprintf("exit %d: %s", o.code, excerpt(s, n))
}

// call runs `bin call ARGS...` in dir with env (nil: serverEnv()).
func (c *cx) call(dir string, env []string, args ...string) callOut {
	if env == nil {
		env = serverEnv()
	}
	cmd := exec.Command(bin, append([]string{"call"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return callOut{err: err}
	}
	track(cmd.Process)
	defer untrack(cmd.Process)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var o callOut
	select {
	case err := <-done:
		o.err = err
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		o.timedOut = true
	}
	o.dur = time.Since(t0)
	o.stdout, o.stderr = out.String(), errb.String()
	var ee *exec.ExitError
	if errors.As(o.err, &ee) {
		o.code, o.err = ee.ExitCode(), nil
	}
	c.logf("call %v: %s in %s", args, o.summary(200), o.dur.Round(time.Millisecond))
	return o
}

// Files.

func writeFile(path, content string) {
	check(os.MkdirAll(filepath.Dir(path), 0o755))
	check(os.WriteFile(path, []byte(content), 0o644))
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// temps lists the atomic-write temporary files (.NAME.tmp-PID-HEX) under dir.
func temps(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// countGlob counts the names in dir matching pattern.
func countGlob(dir, pattern string) int {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	return len(m)
}

// copyTree copies the folders and regular files of src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
}

// Formatting.

// oneLine makes s fit one output line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", `\r`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return strings.ReplaceAll(s, "\t", `\t`)
}

// excerpt is the first n characters of s on one line, saying how long s was.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return oneLine(s)
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (%d bytes)", oneLine(string(r[:n])), len(s))
}

// quote is s as a Go string, shortened to n bytes.
func quote(s string, n int) string {
	if len(s) > n {
		return strconv.Quote(s[:n]) + "…"
	}
	return strconv.Quote(s)
}

func mib(kB int64) string {
	if kB < 0 {
		return "unknown"
	}
	if kB >= 1<<20 {
		return fmt.Sprintf("%.2f GiB", float64(kB)/(1<<20))
	}
	return fmt.Sprintf("%.0f MiB", float64(kB)/1024)
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d bytes (%.1f KiB)", n, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

var editID = regexp.MustCompile(`edit_\d+`)

// Processes.

type procInfo struct {
	pid, ppid, pgid int
	state           byte
	comm            string
}

// procs reads every process's stat line.
func procs() map[int]procInfo {
	out := map[int]procInfo{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := procStat(pid); ok {
			out[pid] = p
		}
	}
	return out
}

func procStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procInfo{}, false
	}
	s := string(b)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return procInfo{}, false
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 3 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], comm: s[i+1 : j]}, true
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := procStat(pid)
	return ok && p.state != 'Z' && p.state != 'X'
}

// descendants lists the processes below pid.
func descendants(pid int) []procInfo {
	all := procs()
	var out []procInfo
	seen := map[int]bool{pid: true}
	for changed := true; changed; {
		changed = false
		for _, p := range all {
			if !seen[p.pid] && seen[p.ppid] {
				seen[p.pid] = true
				out = append(out, p)
				changed = true
			}
		}
	}
	return out
}

// hwm is a process's VmHWM in kB, or -1.
func hwm(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return n
		}
	}
	return -1
}

// killPids SIGKILLs the processes of the list that still run (they were
// started, through serve, by this program).
func killPids(ps []procInfo) {
	for _, p := range ps {
		if now, ok := procStat(p.pid); ok && now.comm == p.comm && alive(p.pid) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}
