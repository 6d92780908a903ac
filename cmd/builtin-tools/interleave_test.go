package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/shop"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// tryText calls a tool and returns its text, or an error (for use off
// the test's goroutine).
func (p *servePeer) tryText(tool string, args map[string]any) (string, error) {
	p.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return "", err
	}
	for p.lines.Scan() {
		var m struct {
			ID     *int `json:"id"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal(p.lines.Bytes(), &m) != nil || m.ID == nil || *m.ID != p.id {
			continue
		}
		if m.Result == nil || len(m.Result.Content) == 0 {
			return "", fmt.Errorf("%s: %s", tool, p.lines.Text())
		}
		if m.Result.IsError {
			return "", errors.New(m.Result.Content[0].Text)
		}
		return m.Result.Content[0].Text, nil
	}
	return "", fmt.Errorf("%s: serve ended: %v", tool, p.lines.Err())
}

var (
	interleaveConst = regexp.MustCompile(`const P(\d+) = \d+`)
	interleaveError = regexp.MustCompile(`(?m)^p\d+\.go:\d+:\d+: error: `)
)

// Issue 32's interleaving target, short (bench/lspbroker -previews 1000
// is the long one): four serve processes with --lsp-broker over one Go
// module share one gopls; each alternates a preview (write with check:
// shared.go with another Marker and Shared returning a string, which
// puts an error in every process's file, or the next process's file with
// another constant and an error) and a write of its own file. After each
// step each process's hover of its constant and of Marker, and the
// diagnostics of its file, are of the text on disk; at the end every
// write is on disk and shared.go as it was. Before the broker kept a
// preview's diagnostics from the other clients, a process's own file
// showed the error of another's preview of shared.go.
func TestBrokerInterleavedPreviews(t *testing.T) {
	testenv.LookPath(t, "gopls")
	testenv.SetupPath()
	const n, steps = 4, 40
	root := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	testenv.WriteTree(t, root, shop.Tree(n))
	env, _ := brokerRuntime(t, root)
	var peers []*servePeer
	for range n {
		peers = append(peers, startServeWith(t, env, "--root", root, "--lsp-broker"))
	}

	var mu sync.Mutex
	var violations []string
	note := func(format string, args ...any) {
		mu.Lock()
		violations = append(violations, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	written := make([][]int, n)
	errs := make([]error, n)
	seen := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, p, disk := i+1, peers[i], 0
			for step := range steps / n {
				var text string
				var err error
				switch {
				case step%2 == 1:
					written[i] = append(written[i], step)
					text, err = p.tryText("write", map[string]any{"path": shop.File(id), "content": shop.Own(id, step, written[i])})
					if err == nil && (strings.Contains(text, "New diagnostics") || interleaveError.MatchString(text)) {
						note("process %d step %d: its write reported another's preview: %s", id, step, text)
					}
					disk = step
				case step%4 == 0:
					text, err = p.tryText("write", map[string]any{"path": "shared.go", "check": true,
						"content": fmt.Sprintf("package shop\n\n// Marker is what the file on disk says.\nconst Marker = \"preview-%d-%d\"\n\nfunc Shared() string { return \"x\" }\n", id, step)})
				default:
					next := id%n + 1
					name := shop.File(next)
					data, rerr := os.ReadFile(filepath.Join(root, name))
					if rerr != nil {
						errs[i] = rerr
						return
					}
					content := interleaveConst.ReplaceAllString(string(data), fmt.Sprintf("const P%d = %d", next, 100000+1000*id+step)) + "\nvar _ int = \"preview\"\n"
					text, err = p.tryText("write", map[string]any{"path": name, "check": true, "content": content})
				}
				if err != nil {
					errs[i] = fmt.Errorf("process %d step %d: %w", id, step, err)
					return
				}
				if step%2 == 0 && strings.Contains(text, "would introduce") {
					mu.Lock()
					seen++
					mu.Unlock()
				}
				text, err = p.tryText("lsp", map[string]any{"operation": "hover", "file": shop.File(id), "line": 3, "symbol": fmt.Sprintf("P%d", id)})
				if err == nil && !strings.Contains(text, fmt.Sprintf("const P%d untyped int = %d\n", id, disk)) {
					note("process %d step %d: hover of P%d (%d on disk): %s", id, step, id, disk, text)
				}
				if err == nil {
					text, err = p.tryText("lsp", map[string]any{"operation": "hover", "file": "shared.go", "line": 4, "symbol": "Marker"})
					if err == nil && !strings.Contains(text, `const Marker untyped string = "disk"`) {
						note("process %d step %d: hover of Marker: %s", id, step, text)
					}
				}
				if err == nil {
					text, err = p.tryText("lsp", map[string]any{"operation": "diagnostics", "file": shop.File(id)})
					if err == nil && interleaveError.MatchString(text) {
						note("process %d step %d: diagnostics of its file: %s", id, step, text)
					}
				}
				if err != nil {
					errs[i] = fmt.Errorf("process %d step %d: %w", id, step, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range violations {
		t.Error(v)
	}
	// A preview whose check timed out says so instead; some must have
	// reached the server.
	t.Logf("%d of %d previews reported the error they staged", seen, steps/2)
	if seen == 0 {
		t.Error("no preview reported the error it staged")
	}
	for i := range n {
		data, _ := os.ReadFile(filepath.Join(root, shop.File(i+1)))
		for _, step := range written[i] {
			if !strings.Contains(string(data), fmt.Sprintf("// write %d\n", step)) {
				t.Errorf("process %d's write of step %d was lost:\n%s", i+1, step, data)
			}
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "shared.go")); string(data) != shop.Shared {
		t.Errorf("shared.go changed on disk:\n%s", data)
	}
	if got := proc.Working("gopls", root); len(got) != 1 {
		t.Errorf("want 1 gopls, got %v", got)
	}
}
