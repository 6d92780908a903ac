package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// servePeer is `builtin-tools serve` driven line by line.
type servePeer struct {
	t     *testing.T
	pid   int
	kill  func() // SIGKILL, as its starter ends it, and waits for its end
	stdin interface{ Write([]byte) (int, error) }
	lines *bufio.Scanner
	id    int
}

func startServe(t *testing.T, root string) *servePeer {
	t.Helper()
	return startServeWith(t, nil, "--root", root, "--lsp-broker=false")
}

// startServeWith starts serve with args, in env (nil: this process's),
// through internal/proc as a harness would (a process group, a tag and,
// where the system gives one, a cgroup of its own, which end with it),
// and initializes its session; the test's end closes its input and
// waits at most 20 s for it to end before killing it.
func startServeWith(t *testing.T, env []string, args ...string) *servePeer {
	t.Helper()
	cmd := exec.Command(testenv.Command(t), append([]string{"serve"}, args...)...)
	cmd.Env = env
	return startServeProc(t, cmd, proc.Options{})
}

// startServeAlone starts serve outside a cgroup of its own (proc's
// Uncontained), so that nothing but serve's own cleanup ends what it
// started: for a test of that cleanup.
func startServeAlone(t *testing.T, root string) *servePeer {
	t.Helper()
	cmd := exec.Command(testenv.Command(t), "serve", "--root", root, "--lsp-broker=false")
	return startServeProc(t, cmd, proc.Options{Uncontained: true})
}

// startServeProc starts serve's cmd through internal/proc with opts and
// its input and output piped, and initializes its session; the test's end
// closes its input and waits at most 20 s for it to end before killing
// it. The peer's kill ends serve alone when it is Uncontained.
func startServeProc(t *testing.T, cmd *exec.Cmd, opts proc.Options) *servePeer {
	t.Helper()
	opts.PipeStdin, opts.PipeStdout = true, true
	p, err := proc.Start(cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	stdin := p.Stdin()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.Exited():
		case <-time.After(20 * time.Second):
			p.Kill()
		}
	})
	kill := func() { p.Kill() }
	if opts.Uncontained {
		kill = func() { p.Signal(syscall.SIGKILL); <-p.Exited() }
	}
	return initServe(t, &servePeer{t: t, pid: p.Pid(), kill: kill, stdin: stdin, lines: bufio.NewScanner(p.Stdout())})
}

func initServe(t *testing.T, p *servePeer) *servePeer {
	p.lines.Buffer(make([]byte, 1<<20), 1<<20)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.recv()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *servePeer) send(msg string) {
	if _, err := p.stdin.Write([]byte(msg + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

// recv reads up to the answer to the last request sent (p.id), passing
// over notifications.
func (p *servePeer) recv() map[string]any {
	p.t.Helper()
	for {
		done := make(chan bool, 1)
		var m map[string]any
		go func() { done <- p.lines.Scan() }()
		select {
		case ok := <-done:
			if !ok || json.Unmarshal(p.lines.Bytes(), &m) != nil {
				p.t.Fatalf("bad reply %q", p.lines.Text())
			}
		case <-time.After(2 * time.Minute):
			p.t.Fatal("no reply")
		}
		if id, ok := m["id"].(float64); ok && int(id) == p.id {
			return m
		}
	}
}

// call runs a tool and returns its result object.
func (p *servePeer) call(tool string, args map[string]any) map[string]any {
	p.t.Helper()
	p.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	p.send(string(b))
	reply := p.recv()
	res, _ := reply["result"].(map[string]any)
	if res == nil {
		p.t.Fatalf("%s: %v", tool, reply)
	}
	return res
}

// text calls a tool and returns its text, failing on an error result.
func (p *servePeer) text(tool string, args map[string]any) string {
	p.t.Helper()
	res := p.call(tool, args)
	content, _ := res["content"].([]any)
	if isErr, _ := res["isError"].(bool); isErr || len(content) == 0 {
		p.t.Fatalf("%s: %v", tool, res)
	}
	first, _ := content[0].(map[string]any)
	text, _ := first["text"].(string)
	return text
}

const busyMain = `package main

import "time"

func main() {
	for range time.Tick(time.Millisecond) {
	}
}
`

// debugRoot is a fixture with a Go program that runs until killed.
func debugRoot(t *testing.T) string {
	root := fixture(t)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/busy\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte(busyMain), 0o644)
	return root
}

// launchBusy starts a debug session of the busy program and returns the
// program's pid.
func launchBusy(t *testing.T, p *servePeer) int {
	t.Helper()
	res := p.call("debug", map[string]any{"operation": "launch", "program": ".", "timeout_seconds": 1})
	sc, _ := res["structuredContent"].(map[string]any)
	stop, _ := sc["stop"].(map[string]any)
	session, _ := stop["session"].(map[string]any)
	pid, _ := session["pid"].(float64)
	if res["isError"] == true || pid == 0 {
		t.Fatalf("launch: %v", res)
	}
	return int(pid)
}

// CLI-2: serve talks over its stdin and stdout only — after it has served
// calls, a debug session included, it holds no network socket and no
// listening socket of any kind, so it cannot be listening.
func TestServeOpensNoSocket(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		testenv.Unavailable(t, "/proc", err)
	}
	testenv.LookPath(t, "dlv")
	root := debugRoot(t)
	p := startServe(t, root)
	if res := p.call("ast_grep", map[string]any{"pattern": "time.Tick($A)", "language": "go"}); res["isError"] == true {
		t.Fatalf("ast_grep: %v", res)
	}
	if res := p.call("read", map[string]any{"path": "hello.txt"}); res["isError"] == true {
		t.Fatalf("read: %v", res)
	}
	launchBusy(t, p)
	pid := strconv.Itoa(p.pid)
	network := socketInodes(t, "tcp", "tcp6", "udp", "udp6")
	listening := unixListeners(t)
	fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
		inode, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		inode = strings.TrimSuffix(inode, "]")
		if network[inode] {
			t.Errorf("serve holds a network socket on fd %s (%s)", fd.Name(), target)
		}
		if listening[inode] {
			t.Errorf("serve holds a listening unix socket on fd %s (%s)", fd.Name(), target)
		}
	}
	p.call("debug", map[string]any{"operation": "terminate"})
}

// socketInodes lists the inodes of the machine's sockets of the kinds.
func socketInodes(t *testing.T, kinds ...string) map[string]bool {
	out := map[string]bool{}
	for _, k := range kinds {
		data, err := os.ReadFile("/proc/net/" + k)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if f := strings.Fields(line); len(f) > 9 {
				out[f[9]] = true
			}
		}
	}
	return out
}

// unixListeners lists the inodes of unix sockets that accept connections.
func unixListeners(t *testing.T) map[string]bool {
	out := map[string]bool{}
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		// Flags 00010000 is __SO_ACCEPTCON: a listening socket.
		if len(f) > 6 && f[3] == "00010000" {
			out[f[6]] = true
		}
	}
	return out
}

// A debug session survives nothing: serve killed with SIGKILL (no chance
// to clean up) takes delve and the program with it — the parent-death
// signal stops delve, the reaper kills the program's own process group.
func TestServeKilledLeavesNoDebuggee(t *testing.T) {
	testenv.LookPath(t, "dlv")
	p := startServeAlone(t, debugRoot(t))
	prog := launchBusy(t, p)
	if err := syscall.Kill(prog, 0); err != nil {
		t.Fatalf("the program is not running: %v", err)
	}
	p.kill()
	if !testenv.Gone(prog) {
		t.Fatalf("the debugged program (pid %d) outlived serve's SIGKILL", prog)
	}
}
