package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/shop"
)

// interleaveResult counts what issue 32's interleaving target asks.
type interleaveResult struct {
	steps, previews, writes int
	// seen counts previews whose check reported the error the preview
	// put in (so the preview did reach the server).
	seen int
	// violations are answers that reflected another process's unsaved
	// preview (or any text not on disk), by kind.
	violations map[string]int
	examples   []string
	lost       int // writes whose line is not on disk at the end
	gopls      int
	elapsed    time.Duration
	stepTimes  []float64 // ms, each step with its checks
}

func (r interleaveResult) String() string {
	var v []string
	total := 0
	for k, n := range r.violations {
		v = append(v, fmt.Sprintf("%s %d", k, n))
		total += n
	}
	s := fmt.Sprintf("%d steps (%d previews, %d writes) in %.1f s, gopls %d; previews that saw their own error %d/%d; violations %d",
		r.steps, r.previews, r.writes, r.elapsed.Seconds(), r.gopls, r.seen, r.previews, total)
	if len(v) > 0 {
		s += " (" + strings.Join(v, ", ") + ")"
	}
	s += fmt.Sprintf("; lost writes %d", r.lost)
	if len(r.stepTimes) > 0 {
		s += fmt.Sprintf("; a step with its checks: median %.0f ms, max %.0f ms", median(r.stepTimes), slices.Max(r.stepTimes))
	}
	for _, e := range r.examples {
		s += "\n  " + e
	}
	return s
}

// interleave runs issue 32's interleaving target: n serve processes
// with --lsp-broker over one Go module, steps steps in all, each process
// alternating a preview (write with check: its text goes to gopls as an
// unsaved version, under the broker's hold) and a write of its own file.
// A preview changes shared.go's Marker and Shared's type, or the next
// process's file (its constant and an error). After every step the
// process asks hover of its own constant and of Marker and the
// diagnostics of its own file: each answer must be of the text on disk
// (its own last write, Marker "disk", no error); anything else counts
// as a violation. Every write adds a line; one missing at the end is a
// lost write.
func interleave(bin string, n, steps int) (res interleaveResult, err error) {
	res.violations = map[string]int{}
	tmp, err := os.MkdirTemp("", "lspbroker-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "shop")
	for name, text := range shop.Tree(n) {
		path := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return res, err
		}
	}
	root, _ = filepath.EvalSymlinks(root)
	runtime := filepath.Join(tmp, "run")
	os.Mkdir(runtime, 0o700)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	var peers []*peer
	defer func() {
		for _, p := range peers {
			p.close()
		}
		stopBroker(runtime)
		deadline := time.Now().Add(time.Minute)
		for len(proc.Working("gopls", root)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}()
	for range n {
		p, err := start(bin, env, []string{"serve", "--root", root, "--lsp-broker"})
		if err != nil {
			return res, err
		}
		peers = append(peers, p)
	}
	var mu sync.Mutex
	note := func(kind, example string) {
		mu.Lock()
		defer mu.Unlock()
		res.violations[kind]++
		if len(res.examples) < 8 {
			res.examples = append(res.examples, example)
		}
	}
	written := make([][]int, n)
	errs := make([]error, n)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := i + 1
			p := peers[i]
			disk := 0
			for k := i; k < steps; k += n {
				step := k / n
				t0 := time.Now()
				var text string
				var err error
				if step%2 == 0 {
					text, err = p.preview(id, n, step, root)
					mu.Lock()
					res.previews++
					if err == nil && strings.Contains(text, "would introduce") {
						res.seen++
					}
					mu.Unlock()
				} else {
					written[i] = append(written[i], step)
					text, err = p.call("write", map[string]any{"path": shop.File(id), "content": shop.Own(id, step, written[i])})
					mu.Lock()
					res.writes++
					mu.Unlock()
					if err == nil && (strings.Contains(text, "New diagnostics") || errorLine.MatchString(text)) {
						note("write's diagnostics", fmt.Sprintf("process %d step %d write: %s", id, step, firstLines(text)))
					}
					disk = step
				}
				if err != nil {
					errs[i] = fmt.Errorf("process %d step %d: %w", id, step, err)
					return
				}
				if err := p.checkDisk(id, step, disk, note); err != nil {
					errs[i] = fmt.Errorf("process %d step %d: %w", id, step, err)
					return
				}
				mu.Lock()
				res.stepTimes = append(res.stepTimes, ms(time.Since(t0)))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(t0)
	res.steps = res.previews + res.writes
	res.gopls = len(proc.Working("gopls", root))
	for _, e := range errs {
		if e != nil {
			return res, e
		}
	}
	for i := range n {
		data, _ := os.ReadFile(filepath.Join(root, shop.File(i+1)))
		for _, step := range written[i] {
			if !strings.Contains(string(data), fmt.Sprintf("// write %d\n", step)) {
				res.lost++
			}
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "shared.go")); string(data) != shop.Shared {
		note("shared.go changed on disk", string(data))
	}
	return res, nil
}

var constRe = regexp.MustCompile(`const P(\d+) = \d+`)

// preview stages, with nothing written, either shared.go with another
// Marker and Shared returning a string (every process's file then has
// an error), or the next process's file with another constant and an
// error of its own.
func (p *peer) preview(id, n, step int, root string) (string, error) {
	if step%4 == 0 {
		content := fmt.Sprintf("package shop\n\n// Marker is what the file on disk says.\nconst Marker = \"preview-%d-%d\"\n\nfunc Shared() string { return \"x\" }\n", id, step)
		return p.call("write", map[string]any{"path": "shared.go", "check": true, "content": content})
	}
	next := id%n + 1
	name := shop.File(next)
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return "", err
	}
	content := constRe.ReplaceAllString(string(data), fmt.Sprintf("const P%d = %d", next, 100000+1000*id+step)) + "\nvar _ int = \"preview\"\n"
	return p.call("write", map[string]any{"path": name, "check": true, "content": content})
}

var errorLine = regexp.MustCompile(`(?m)^p\d+\.go:\d+:\d+: error: `)

// checkDisk asks hover of the process's constant and of Marker, and the
// diagnostics of its file: each must be of the text on disk.
func (p *peer) checkDisk(id, step, disk int, note func(kind, example string)) error {
	text, err := p.call("lsp", map[string]any{"operation": "hover", "file": shop.File(id), "line": 3, "symbol": fmt.Sprintf("P%d", id)})
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("const P%d untyped int = %d\n", id, disk); !strings.Contains(text, want) {
		note("hover of its own constant", fmt.Sprintf("process %d step %d: want %q, got %s", id, step, want, firstLines(text)))
	}
	text, err = p.call("lsp", map[string]any{"operation": "hover", "file": "shared.go", "line": 4, "symbol": "Marker"})
	if err != nil {
		return err
	}
	if !strings.Contains(text, `const Marker untyped string = "disk"`) {
		note("hover of Marker", fmt.Sprintf("process %d step %d: %s", id, step, firstLines(text)))
	}
	text, err = p.call("lsp", map[string]any{"operation": "diagnostics", "file": shop.File(id)})
	if err != nil {
		return err
	}
	if errorLine.MatchString(text) {
		note("diagnostics of its own file", fmt.Sprintf("process %d step %d: %s", id, step, firstLines(text)))
	}
	return nil
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, " | ")
}

// stopBroker ends the broker of the runtime folder, if any.
func stopBroker(runtime string) {
	if pid := brokerPIDOf(runtime); pid > 0 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
}
