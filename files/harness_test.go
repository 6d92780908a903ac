package files_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// harness drives the file tools through a real run, the way a peer does, and
// records what each call reported with Call.Wrote.
type harness struct {
	t       *testing.T
	run     *registry.Run
	root    string // the run's root, symlinks resolved
	mu      sync.Mutex
	written []string
}

// newHarness makes a run over a fresh folder "root" inside a parent folder,
// so tests can put files next to the root ("outside") that must never change.
func newHarness(t *testing.T) *harness {
	t.Helper()
	parent := t.TempDir()
	return newHarnessAt(t, filepath.Join(parent, "root"))
}

// newHarnessWithBudget makes a harness whose run has the given output
// budget.
func newHarnessWithBudget(t *testing.T, budget int) *harness {
	t.Helper()
	return newHarnessFull(t, filepath.Join(t.TempDir(), "root"), budget)
}

func newHarnessAt(t *testing.T, root string) *harness {
	t.Helper()
	return newHarnessFull(t, root, 0)
}

func newHarnessFull(t *testing.T, root string, budget int) *harness {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t}
	recorder := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("recorder"),
		Wrappers: []registry.Wrapper{{
			Name: "record-written",
			Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
				return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
					res, err := next(ctx, c)
					h.mu.Lock()
					h.written = c.Written()
					h.mu.Unlock()
					return res, err
				}
			},
		}}}
	run, err := registry.NewRun(registry.Config{Root: root, Families: []registry.Extension{files.Family, recorder}, OutputBudget: budget})
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	t.Cleanup(func() { run.Close() })
	h.run, h.root = run, run.Root()
	return h
}

// outside is a folder next to the root, for escape attempts.
func (h *harness) outside() string {
	dir := filepath.Join(filepath.Dir(h.root), "outside")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// putOutside writes a file named name in the folder outside the root and
// returns its path.
func (h *harness) putOutside(name, content string) string {
	h.t.Helper()
	p := filepath.Join(h.outside(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) call(tool string, args any) *mcp.CallToolResult {
	h.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	h.written = nil
	res, err := h.run.Call(context.Background(), tiers.Normal, tool, raw)
	if err != nil {
		h.t.Fatalf("%s %s: Go error %v (tool failures must be error results)", tool, raw, err)
	}
	if res == nil {
		h.t.Fatalf("%s %s: nil result", tool, raw)
	}
	return res
}

// callQuiet calls a tool from any goroutine and returns "" on success, else
// the error text; it does not touch the harness's record of written files.
func (h *harness) callQuiet(tool string, args any) string {
	raw, err := json.Marshal(args)
	if err != nil {
		return err.Error()
	}
	res, err := h.run.Call(context.Background(), tiers.Normal, tool, raw)
	switch {
	case err != nil:
		return "Go error: " + err.Error()
	case res == nil:
		return "nil result"
	case res.IsError:
		return registry.ResultText(res)
	}
	return ""
}

// ok calls a tool that must succeed and returns its text.
func (h *harness) ok(tool string, args any) string {
	h.t.Helper()
	res := h.call(tool, args)
	text := registry.ResultText(res)
	if res.IsError {
		h.t.Fatalf("%s failed: %s", tool, text)
	}
	return text
}

// fail calls a tool that must fail, checks it recorded no written file, and
// returns the error text.
func (h *harness) fail(tool string, args any) string {
	h.t.Helper()
	res := h.call(tool, args)
	text := registry.ResultText(res)
	if !res.IsError {
		h.t.Fatalf("%s succeeded, want an error; result:\n%s", tool, text)
	}
	if text == "" {
		h.t.Fatalf("%s failed with an empty message", tool)
	}
	if len(h.written) > 0 {
		h.t.Errorf("%s failed but recorded written files %v", tool, h.written)
	}
	return text
}

func (h *harness) abs(rel string) string { return filepath.Join(h.root, filepath.FromSlash(rel)) }

func (h *harness) put(rel, content string) string {
	h.t.Helper()
	return h.putMode(rel, content, 0o644)
}

func (h *harness) putMode(rel, content string, mode fs.FileMode) string {
	h.t.Helper()
	p := h.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) get(rel string) string {
	h.t.Helper()
	return testenv.ReadFile(h.t, h.abs(rel))
}

// wantFile fails unless the file at rel holds content.
func (h *harness) wantFile(rel, content string) {
	h.t.Helper()
	if c := h.get(rel); c != content {
		h.t.Errorf("%s = %q, want %q", rel, c, content)
	}
}

// wantGone fails unless nothing is at rel.
func (h *harness) wantGone(rel string) {
	h.t.Helper()
	if _, err := os.Stat(h.abs(rel)); !os.IsNotExist(err) {
		h.t.Errorf("%s is there (%v)", rel, err)
	}
}

// wantWritten checks the files the last call recorded with Call.Wrote.
func (h *harness) wantWritten(rels ...string) {
	h.t.Helper()
	var want []string
	for _, r := range rels {
		want = append(want, h.abs(r))
	}
	got := append([]string(nil), h.written...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("Call.Written() = %v, want %v", got, want)
	}
}

// wantAll fails unless s contains every one of subs.
func wantAll(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("missing %q in:\n%s", sub, s)
		}
	}
}

// tempLeftovers lists atomic-write temporary files under dir.
func tempLeftovers(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
