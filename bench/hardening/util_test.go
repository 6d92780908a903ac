//go:build hardening

package hardening

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
	"testing"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// caseErr is what check panics with; guard turns it into a test failure.
type caseErr struct{ err error }

func check(err error) {
	if err != nil {
		panic(caseErr{err})
	}
}

// cx is one case's context: its folders, the processes it started, and
// the test (or subtest) its measurements report to.
type cx struct {
	t testing.TB
	*caseState
}

type caseState struct {
	id            string
	base          string
	root, outside string
	tmp           string // TMPDIR of the processes the case starts
	mu            sync.Mutex
	servers       []*server
}

// Folders and processes still to clean up, for an interrupt.
var (
	globalMu   sync.Mutex
	tempDirs   = map[string]bool{}
	startedPid = map[int]*os.Process{}
)

func newCx(t testing.TB, id string) *cx {
	base, err := os.MkdirTemp("", "hardening-"+strings.ToLower(id)+"-")
	if err != nil {
		t.Fatal(err)
	}
	globalMu.Lock()
	tempDirs[base] = true
	globalMu.Unlock()
	c := &cx{t: t, caseState: &caseState{id: id, base: base}}
	c.tmp = filepath.Join(base, "tmp")
	if err := os.MkdirAll(c.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	c.guard(func() { c.root, c.outside = c.pair("") })
	return c
}

// guard runs f, turning a check failure into a fatal test error.
func (c *cx) guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if ce, ok := r.(caseErr); ok {
				c.t.Fatalf("%s: case aborted: %v", c.id, ce.err)
			}
			panic(r)
		}
	}()
	f()
}

// sub runs one measurement as a subtest of the case (skipped when
// pending lists ID/name).
func (c *cx) sub(name string, f func(c *cx)) {
	t, ok := c.t.(*testing.T)
	if !ok {
		f(c)
		return
	}
	t.Run(name, func(t *testing.T) {
		skipPending(t, c.id+"/"+name)
		sc := &cx{t: t, caseState: c.caseState}
		sc.guard(func() { f(sc) })
	})
}

// pair makes a fresh root and outside sibling under the case's folder.
func (c *cx) pair(name string) (root, outside string) {
	dir := filepath.Join(c.base, name)
	root, outside = filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	check(os.MkdirAll(root, 0o755))
	check(os.MkdirAll(outside, 0o755))
	return root, outside
}

// cleanup kills the case's servers and every process still carrying the
// run's tag that descends from them, then removes the folders.
func (c *cx) cleanup() {
	c.mu.Lock()
	servers := c.servers
	c.mu.Unlock()
	for _, s := range servers {
		s.kill()
	}
	if left := tagged(c.base); len(left) > 0 {
		c.t.Logf("%s: killed %d process(es) left behind: %s", c.id, len(left), procList(left))
		killPids(left)
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
	for d := range tempDirs {
		killPids(tagged(d))
	}
}

func removeAll() {
	globalMu.Lock()
	defer globalMu.Unlock()
	for d := range tempDirs {
		os.RemoveAll(d)
	}
}

// line logs one measurement: what was measured, the figure now, and the
// figure before the fix.
func (c *cx) line(what, figure, before string) {
	c.t.Helper()
	c.t.Logf("%s | %s | %s | before: %s", c.id, what, oneLine(figure), before)
}

// want fails the measurement, saying what the fix guarantees, unless ok.
func (c *cx) want(ok bool, format string, a ...any) {
	c.t.Helper()
	if !ok {
		c.t.Errorf("%s: want %s", c.id, fmt.Sprintf(format, a...))
	}
}

func (c *cx) logf(format string, a ...any) {
	if testing.Verbose() {
		c.t.Logf("[%s] %s", c.id, fmt.Sprintf(format, a...))
	}
}

// serverEnv is the environment of server processes: the language servers'
// folders first on PATH, then extra folders before them.
func serverEnv(front ...string) []string {
	dirs := append(append([]string{}, front...), filepath.Join(toolsDir, "bin"), filepath.Join(toolsDir, "node_modules", ".bin"))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+strings.Join(dirs, ":")+":"+os.Getenv("PATH"))
}

// env is the case's environment for the programs it starts: serverEnv,
// a TMPDIR inside the case's folder, and the tag that finds what is left.
func (c *cx) env(front ...string) []string {
	return append(serverEnv(front...), "TMPDIR="+c.tmp, tagVar+"="+c.base)
}

// callOut is what one `builtin-tools call` printed.
type callOut struct {
	stdout, stderr string
	code           int
	dur            time.Duration
	timedOut       bool
	termExited     bool // after timedOut, SIGTERM ended it
	err            error
}

// summary is the call's answer as one short string.
func (o callOut) summary(n int) string {
	switch {
	case o.timedOut:
		return fmt.Sprintf("no answer within %d s", int(o.dur.Seconds()))
	case o.err != nil:
		return o.err.Error()
	}
	s := strings.TrimSpace(o.stdout)
	if s == "" {
		s = strings.TrimSpace(o.stderr)
	}
	return fmt.Sprintf("exit %d: %s", o.code, excerpt(s, n))
}

// call runs `bin call ARGS...` in dir with env (nil: c.env()); code_graph
// keeps no snapshot.
func (c *cx) call(dir string, env []string, args ...string) callOut {
	return c.callWithin(timeout, false, dir, env, args...)
}

// callWithin is call waiting d; with term, a call still running then gets
// SIGTERM, and 5 s later SIGKILL (termExited says whether SIGTERM ended it).
func (c *cx) callWithin(d time.Duration, term bool, dir string, env []string, args ...string) callOut {
	if env == nil {
		env = c.env()
	}
	cmd := exec.Command(bin, append([]string{"call", "--graph-cache=", "--lsp-broker=false"}, args...)...)
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
	case <-time.After(d):
		o.timedOut = true
		if term {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
				o.termExited = true
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		} else {
			cmd.Process.Kill()
			<-done
		}
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

// graph runs `call code_graph` with args and operation op; a binary older
// than the argument's rename (op then) gets op.
func (c *cx) graph(root string, flags []string, op string, args string) callOut {
	call := func(key string) callOut {
		a := fmt.Sprintf(`{%q:%q`, key, op)
		if args != "" {
			a += "," + args
		}
		return c.call(root, nil, append(append([]string{"--root", root}, flags...), "code_graph", a+"}")...)
	}
	o := call("operation")
	if strings.Contains(o.stdout, "bad arguments") && strings.Contains(o.stdout, `"operation"`) {
		o = call("op")
	}
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

// tempDuring watches root for an atomic-write temporary file while the
// call p runs, for at most d, and returns the first one seen, or "" when
// the call was answered first (the answer stays for await). It looks
// every millisecond: such a file lives only while its write is under way.
func tempDuring(root string, p *pendingCall, d time.Duration) string {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	limit := time.After(d)
	for len(p.ch) == 0 {
		if t := temps(root); len(t) > 0 {
			return t[0]
		}
		select {
		case <-tick.C:
		case <-limit:
			return ""
		}
	}
	return ""
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

// stillAlive lists the processes of rec, and of their groups, that run.
func stillAlive(rec []procInfo) []procInfo {
	var surv []procInfo
	groups := map[int]bool{}
	seen := map[int]bool{}
	for _, p := range rec {
		groups[p.pgid] = true
		if now, ok := procStat(p.pid); ok && now.comm == p.comm && alive(p.pid) {
			surv = append(surv, now)
			seen[p.pid] = true
		}
	}
	for _, p := range procs() {
		if groups[p.pgid] && !seen[p.pid] && alive(p.pid) {
			surv = append(surv, p)
		}
	}
	return surv
}

// survivors waits up to d for the processes of rec, and of their groups,
// to end, and lists those still alive then: what "alive d later" means in
// a figure, found as soon as nothing is.
func survivors(rec []procInfo, d time.Duration) []procInfo {
	var surv []procInfo
	testenv.Until(d, func() bool {
		surv = stillAlive(rec)
		return len(surv) == 0
	})
	return surv
}

// named counts the processes of ps whose command is comm.
func named(ps []procInfo, comm string) int {
	n := 0
	for _, p := range ps {
		if p.comm == comm {
			n++
		}
	}
	return n
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

// tagVar marks, in the environment, every process a case starts (the value
// is the case's folder), so a survivor is found even after setsid.
const tagVar = "HARDENING_CASE"

// tagged lists the running processes whose environment holds tagVar=tag.
func tagged(tag string) []procInfo {
	want := []byte(tagVar + "=" + tag + "\x00")
	var out []procInfo
	self := os.Getpid()
	for pid, p := range procs() {
		if pid == self || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(append(b, 0), want) {
			out = append(out, p)
		}
	}
	return out
}

// need returns the path of prog, skipping the test when it is missing
// (failing it under BUILTIN_TOOLS_REQUIRE=all, as CI runs).
func (c *cx) need(prog string) string {
	c.t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		for _, d := range []string{filepath.Join(toolsDir, "bin"), filepath.Join(toolsDir, "node_modules", ".bin")} {
			if fi, e := os.Stat(filepath.Join(d, prog)); e == nil && fi.Mode()&0o111 != 0 {
				return filepath.Join(d, prog)
			}
		}
		c.lacks("%s is not installed (scripts/install.sh installs what the tests need)", prog)
	}
	return p
}

// lacks ends the case for what this machine lacks: a failure under
// BUILTIN_TOOLS_REQUIRE=all, as CI runs, else a skip.
func (c *cx) lacks(format string, args ...any) {
	c.t.Helper()
	if os.Getenv("BUILTIN_TOOLS_REQUIRE") == "all" {
		c.t.Fatalf(format+" (BUILTIN_TOOLS_REQUIRE=all)", args...)
	}
	c.t.Skipf(format+"; set BUILTIN_TOOLS_REQUIRE=all to make this a failure", args...)
}

// script writes an executable shell script.
func script(path, body string) {
	writeFile(path, "#!/bin/sh\n"+body)
	check(os.Chmod(path, 0o755))
}

// runProg runs a program to its end in dir and returns its combined output,
// bounded by a minute.
func runProg(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		<-done
		err = fmt.Errorf("%s: no end within a minute", name)
	}
	return string(out), err
}

// gitRepo makes root a git repository with its files committed.
func gitRepo(root string) {
	env := append(os.Environ(), "GIT_AUTHOR_NAME=h", "GIT_AUTHOR_EMAIL=h@example.com", "GIT_COMMITTER_NAME=h", "GIT_COMMITTER_EMAIL=h@example.com")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}} {
		if out, err := runProg(root, env, "git", args...); err != nil {
			check(fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out))
		}
	}
}

// vibeEnv is c.env with the per-user state and cache folders inside the
// case's folder, where a worker journal kept "in a stable place" goes.
func (c *cx) vibeEnv(front ...string) []string {
	home := filepath.Join(c.base, "home")
	check(os.MkdirAll(home, 0o755))
	return append(c.env(front...), "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"))
}

// cell runs one eval cell on s, waiting up to d.
func (s *server) cell(d time.Duration, code string) toolResult {
	return s.toolWithin(d, "eval", map[string]any{"code": code, "description": "a cell of the hardening reproductions"})
}
