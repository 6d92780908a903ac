package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// D3: every path a server sends back goes through the path guard. Here a
// package folder of the module is a symlink to a folder outside the root:
// gopls reports its files under the root's spelling, but they are outside.
func TestServerPathsThroughSymlinksStayOutside(t *testing.T) {
	t.Parallel()
	testenv.LookPath(t, "gopls")
	parent := t.TempDir()
	root, outside := filepath.Join(parent, "root"), filepath.Join(parent, "outside", "ext")
	const ext = "package ext\n\n// Helper is outside the root.\nfunc Helper() int { return 1 }\n"
	for path, text := range map[string]string{
		filepath.Join(root, "go.mod"):  "module example.com/t\n\ngo 1.22\n",
		filepath.Join(root, "main.go"): "package main\n\nimport \"example.com/t/ext\"\n\nfunc main() {\n\tprintln(ext.Helper())\n}\n",
		filepath.Join(outside, "e.go"): ext,
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside/ext", filepath.Join(root, "ext")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	main := filepath.Join(root, "main.go")

	out, err := sup.Definition(ctx, loc(t, sup, main), protocol.Place{Line: 6, Symbol: "Helper"})
	t.Logf("definition: %v\n%+v", err, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Locations) != 1 || !out.Locations[0].Outside || out.Locations[0].Text != "" {
		t.Fatalf("definition quoted a file outside the root, or did not say it is outside: %+v", out.Locations)
	}
	out, err = sup.References(ctx, loc(t, sup, main), protocol.Place{Line: 6, Symbol: "Helper"})
	t.Logf("references: %v\n%+v", err, out)
	for _, l := range out.Locations {
		if strings.Contains(l.Text, "return 1") {
			t.Fatalf("references quoted a file outside the root: %+v", l)
		}
	}

	res, err := sup.Rename(ctx, loc(t, sup, main), protocol.Place{Line: 6, Symbol: "Helper"}, "Pwned", false)
	t.Logf("rename: %v %v", res, err)
	if err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Fatalf("rename through a symlinked folder: %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "e.go")); string(data) != ext {
		t.Fatalf("the file outside the root was rewritten:\n%s", data)
	}
	if data, _ := os.ReadFile(main); strings.Contains(string(data), "Pwned") {
		t.Fatalf("a refused rename changed main.go:\n%s", data)
	}
}

// D6: a named pipe named like source code is refused before any server
// or read touches it, so nothing blocks.
func TestPipeIsRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/p\n"), 0o644)
	pipe := filepath.Join(root, "pipe.go")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		testenv.Unavailable(t, "FIFOs", err)
	}
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := sup.Diagnostics(ctx, loc(t, sup, pipe))
	expectErr(t, "diagnostics of a pipe", err, checkout.ErrBadFile, "pipe.go is not a regular file")
	_, err = sup.Hover(ctx, loc(t, sup, pipe), protocol.Place{Line: 1, Symbol: "x"})
	expectErr(t, "hover of a pipe", err, checkout.ErrBadFile, "not a regular file")
	if _, err := sup.AfterWrite(ctx, loc(t, sup, pipe)); err != nil {
		t.Logf("after write of a pipe: %v", err)
	}
}

// A server that stops answering because its own tools block on a named
// pipe in the checkout (gopls's go list does): the timeout names the pipe.
func TestTimeoutNamesAPipeInTheRoot(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	if err := syscall.Mkfifo(filepath.Join(root, "p.fake"), 0o644); err != nil {
		testenv.Unavailable(t, "FIFOs", err)
	}
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "mute")}, RequestTimeout: time.Second})
	defer sup.Close()
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrServerTimeout, "no answer within 1s", "p.fake is not a regular file", "remove it, then reload")
}
