package main

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// D6: a named pipe named like source code neither hangs ast_grep nor keeps
// serve from exiting when its input ends; SIGTERM also ends it.
func TestServeWithAPipeInTheRoot(t *testing.T) {
	bin := testenv.Command(t)
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "p.go"), 0o644); err != nil {
		testenv.Unavailable(t, "FIFOs", err)
	}
	for _, stop := range []string{"eof", "sigterm"} {
		t.Run(stop, func(t *testing.T) {
			cmd := exec.Command(bin, "serve", "--root", root, "--without", "lsp")
			in, _ := cmd.StdinPipe()
			outPipe, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			out := bufio.NewReader(outPipe)
			io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
			io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ast_grep","arguments":{"pattern":"package $A","path":"p.go"}}}`+"\n")
			answers := make(chan string, 4)
			go func() {
				for {
					l, err := out.ReadString('\n')
					if err != nil {
						close(answers)
						return
					}
					answers <- l
				}
			}()
			var got string
			for got == "" || !strings.Contains(got, `"id":1`) {
				select {
				case got = <-answers:
				case <-time.After(30 * time.Second):
					t.Fatal("ast_grep on a named pipe did not answer")
				}
			}
			if !strings.Contains(got, "not a regular file") || !strings.Contains(got, `"isError":true`) {
				t.Errorf("ast_grep on a pipe: %s", got)
			}
			if stop == "eof" {
				in.Close()
			} else {
				cmd.Process.Signal(syscall.SIGTERM)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve still runs 30 s after %s", stop)
			}
		})
	}
}
