package structural_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// callOrUnblock is call with a deadline: a call still running when it
// passes (blocked opening the FIFO) fails the test, and the FIFO is then
// opened for writing and closed so the blocked reader gets EOF and the
// test can end instead of hanging.
func callOrUnblock(t *testing.T, r *registry.Run, fifo, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, _ := json.Marshal(args)
	type result struct {
		text  string
		isErr bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		res, err := r.Call(ctx, tiers.Normal, tool, b)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: registry.ResultText(res), isErr: res.IsError}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("%s %s: %v", tool, b, res.err)
		}
		return res.text, res.isErr
	case <-ctx.Done():
	}
	// O_RDWR opens a FIFO without waiting for a reader.
	if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
		f.Close()
	}
	<-done
	t.Fatalf("%s %s was still running after the deadline: it blocked on the named pipe", tool, b)
	return "", false
}

// D6: a named pipe named like source code is refused at once when given as
// path, and a folder search passes over it.
func TestNamedPipeIsRefusedNotOpened(t *testing.T) {
	r := newRun(t, map[string]string{"src/a.go": "package a\n\nfunc f() { g(1) }\n"}, builtintools.Options{})
	fifo := filepath.Join(r.Root(), "src", "p.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		testenv.Unavailable(t, "FIFOs", err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ast_grep", map[string]any{"pattern": "package $A", "path": "src/p.go"}},
		{"ast_grep", map[string]any{"pattern": "g($A)", "path": "src/p.go", "language": "go"}},
		{"ast_edit", map[string]any{"pattern": "g($A)", "rewrite": "h($A)", "path": "src/p.go"}},
	} {
		text, isErr := callOrUnblock(t, r, fifo, c.tool, c.args)
		if !isErr || !strings.Contains(text, "src/p.go is a named pipe") || !strings.Contains(text, "not a regular file") {
			t.Errorf("%s %v: (error=%v) %q, want a refusal naming the named pipe", c.tool, c.args, isErr, text)
		}
	}
	for _, dir := range []string{"", "src"} {
		text, isErr := callOrUnblock(t, r, fifo, "ast_grep", map[string]any{"pattern": "g($A)", "path": dir})
		if isErr || !strings.HasPrefix(text, "1 match") || !strings.Contains(text, "src/a.go:3:") || strings.Contains(text, "p.go") {
			t.Errorf("folder %q: (error=%v) %q, want the match in a.go and nothing about p.go", dir, isErr, text)
		}
	}
	text, isErr := callOrUnblock(t, r, fifo, "ast_edit", map[string]any{"pattern": "g($A)", "rewrite": "h($A)"})
	if isErr || !strings.Contains(text, "1 replacement in 1 file") || strings.Contains(text, "p.go") {
		t.Errorf("ast_edit over the root: (error=%v) %q", isErr, text)
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode().Type()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is gone or changed: %v %v", info, err)
	}
}

// A device node named like source code (here /dev/zero's numbers) is
// refused too, not read until a size limit.
func TestDeviceNodeIsRefused(t *testing.T) {
	r := newRun(t, map[string]string{"a.go": "package a\n"}, builtintools.Options{})
	dev := filepath.Join(r.Root(), "zero.go")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
		testenv.Unavailable(t, "device nodes (mknod)", err)
	}
	text, isErr := callOrUnblock(t, r, dev, "ast_grep", map[string]any{"pattern": "package $A", "path": "zero.go"})
	if !isErr || !strings.Contains(text, "zero.go is a character device") {
		t.Errorf("(error=%v) %q, want a refusal naming the device", isErr, text)
	}
}
