package main

import (
	"bufio"
	"encoding/json"
	"github.com/builtin-tools/builtin-tools/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CLI-2: serve talks over its stdin and stdout only — after it has served
// calls, the process holds no socket at all, so it cannot be listening.
func TestServeOpensNoSocket(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		testenv.Unavailable(t, "/proc", err)
	}
	bin := testenv.Command(t)
	root := fixture(t)
	cmd := exec.Command(bin, "serve", "--root", root)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(msg string) {
		if _, err := stdin.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		done := make(chan bool, 1)
		var m map[string]any
		go func() { done <- lines.Scan() }()
		select {
		case ok := <-done:
			if !ok || json.Unmarshal(lines.Bytes(), &m) != nil {
				t.Fatalf("bad reply %q", lines.Text())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no reply")
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ast_grep","arguments":{"pattern":"fmt.Println($A)","language":"go"}}}`)
	if reply := recv(); reply["result"] == nil {
		t.Fatalf("ast_grep: %v", reply)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"hello.txt"}}}`)
	if reply := recv(); reply["result"] == nil {
		t.Fatalf("read: %v", reply)
	}
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd", fd.Name()))
		if strings.HasPrefix(target, "socket:") {
			t.Errorf("serve holds a socket on fd %s (%s)", fd.Name(), target)
		}
	}
}
