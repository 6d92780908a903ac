// Command lspbroker measures issue 32's cross-process target: N
// `builtin-tools serve` processes over one Go module, each asking
// `lsp references` and then writing a file, with and without
// --lsp-broker. Per round it prints, for each binary and mode, the gopls
// processes running once every process has answered, their total
// resident memory, and each process's first answer (process 1 starts the
// server cold; the others find it warm when they share it). Several
// binaries (an older tree beside a newer one) run interleaved in the same
// rounds. bench/lspbroker.sh builds the binary and runs it, as
// BENCHMARKS.md quotes.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

func main() {
	bins := flag.String("bins", "", "builtin-tools binaries, name=path[,name=path...] (required)")
	n := flag.Int("n", 4, "serve processes")
	rounds := flag.Int("rounds", 3, "rounds; each runs every binary in both modes")
	modes := flag.String("modes", "isolated,broker", "modes to run, in order: isolated (each process its own gopls), broker (--lsp-broker)")
	files := flag.Int("files", 20, "extra files in the generated module (each imports a few standard packages)")
	previews := flag.Int("previews", 0, "instead: the interleaving target, this many previews and writes in all from the n processes through the broker (interleave.go)")
	flag.Parse()
	if *bins == "" {
		fail("-bins is required")
	}
	type bin struct{ name, path string }
	var bs []bin
	for _, kv := range strings.Split(*bins, ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			name, path = filepath.Base(kv), kv
		}
		bs = append(bs, bin{name, path})
	}
	if *previews > 0 {
		for r := 1; r <= *rounds; r++ {
			for _, b := range bs {
				res, err := interleave(b.path, *n, *previews)
				if err != nil {
					fail(fmt.Sprintf("%s interleave: %v", b.name, err))
				}
				fmt.Printf("round %d %-10s load %s  %s\n", r, b.name, loadavg(), res)
			}
		}
		return
	}
	type key struct{ bin, mode string }
	all := map[key][]result{}
	var order []key
	for r := 1; r <= *rounds; r++ {
		for _, b := range bs {
			for _, mode := range strings.Split(*modes, ",") {
				res, err := run(b.path, mode == "broker", *n, *files)
				if err != nil {
					fail(fmt.Sprintf("%s %s: %v", b.name, mode, err))
				}
				k := key{b.name, mode}
				if all[k] == nil {
					order = append(order, k)
				}
				all[k] = append(all[k], res)
				fmt.Printf("round %d %-10s %-8s load %s  %s\n", r, b.name, mode, loadavg(), res)
			}
		}
	}
	fmt.Println("# medians over the rounds")
	// One isolated process's gopls, per binary: what the broker's total
	// is compared with.
	one := map[string]float64{}
	for _, k := range order {
		if k.mode == "isolated" {
			var per []float64
			for _, res := range all[k] {
				per = append(per, float64(res.rssKB)/float64(max(res.gopls, 1)))
			}
			one[k.bin] = median(per)
		}
	}
	for _, k := range order {
		rs := all[k]
		var gopls, rss, first, warm, write []float64
		for _, res := range rs {
			gopls = append(gopls, float64(res.gopls))
			rss = append(rss, float64(res.rssKB))
			first = append(first, ms(res.first[0]))
			for _, d := range res.first[1:] {
				warm = append(warm, ms(d))
			}
			for _, d := range res.write {
				write = append(write, ms(d))
			}
		}
		ratio := ""
		if o := one[k.bin]; o > 0 {
			ratio = fmt.Sprintf(" = %.2f× one process's (%.0f MiB)", median(rss)/o, o/1024)
		}
		fmt.Printf("%-10s %-8s gopls %.0f, RSS %.0f MiB%s; first answer: process 1 %.0f ms, processes 2–%d median %.1f ms (max %.1f); write %.1f ms\n",
			k.bin, k.mode, median(gopls), median(rss)/1024, ratio, median(first), *n, median(warm), slices.Max(warm), median(write))
	}
}

type result struct {
	gopls   int
	rssKB   int64
	brokerK int64
	first   []time.Duration
	write   []time.Duration
}

func (r result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gopls %d, RSS %d MiB", r.gopls, r.rssKB/1024)
	if r.brokerK > 0 {
		fmt.Fprintf(&b, " (broker %d MiB)", r.brokerK/1024)
	}
	b.WriteString("; first answer")
	for i, d := range r.first {
		fmt.Fprintf(&b, " %d:%.1fms", i+1, ms(d))
	}
	b.WriteString("; write")
	for _, d := range r.write {
		fmt.Fprintf(&b, " %.1fms", ms(d))
	}
	return b.String()
}

// run starts n serve processes over a fresh module, one after another,
// each answering references and then writing a file; measures; ends them.
func run(bin string, broker bool, n, files int) (res result, err error) {
	tmp, err := os.MkdirTemp("", "lspbroker-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "shop")
	if err := writeModule(root, files); err != nil {
		return res, err
	}
	root, _ = filepath.EvalSymlinks(root)
	// A broker folder of the run's own: no broker of the user's is used.
	runtime := filepath.Join(tmp, "run")
	os.Mkdir(runtime, 0o700)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	args := []string{"serve", "--root", root}
	if !broker {
		args = append(args, "--lsp-broker=false")
	}
	var peers []*peer
	defer func() {
		for _, p := range peers {
			p.close()
		}
		if broker {
			stopBroker(runtime)
		}
		deadline := time.Now().Add(time.Minute)
		for len(proc.Working("gopls", root)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}()
	for i := range n {
		p, err := start(bin, env, args)
		if err != nil {
			return res, err
		}
		peers = append(peers, p)
		t0 := time.Now()
		text, err := p.call("lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"})
		if err != nil {
			return res, fmt.Errorf("process %d: references: %w", i+1, err)
		}
		res.first = append(res.first, time.Since(t0))
		if !strings.Contains(text, "cart.go:11") {
			return res, fmt.Errorf("process %d: references: %s", i+1, text)
		}
		t0 = time.Now()
		content := fmt.Sprintf("package shop\n\nfunc p%d() int { return (&Cart{}).Total() }\n", i+1)
		text, err = p.call("write", map[string]any{"path": fmt.Sprintf("p%d.go", i+1), "content": content})
		if err != nil {
			return res, fmt.Errorf("process %d: write: %w", i+1, err)
		}
		res.write = append(res.write, time.Since(t0))
		if strings.Contains(text, "New diagnostics") {
			return res, fmt.Errorf("process %d: write: %s", i+1, text)
		}
	}
	pids := proc.Working("gopls", root)
	res.gopls = len(pids)
	for _, pid := range pids {
		res.rssKB += proc.RSSKB(pid)
	}
	if broker {
		if pid := brokerPIDOf(runtime); pid > 0 {
			res.brokerK = proc.RSSKB(pid)
		}
	}
	return res, nil
}

// writeModule writes a Go module: cart.go (the symbol asked about) and
// files extra files using standard packages, so gopls has a workspace of
// some size to load.
func writeModule(root string, files int) error {
	tree := map[string]string{
		"go.mod":  "module example.com/shop\n\ngo 1.22\n",
		"cart.go": "package shop\n\n// Cart holds items.\ntype Cart struct{ Items []string }\n\n// Total counts the items.\nfunc (c *Cart) Total() int { return len(c.Items) }\n\nfunc use() int {\n\tc := &Cart{}\n\treturn c.Total() + c.Total()\n}\n",
	}
	for i := range files {
		tree[fmt.Sprintf("extra/x%d/x.go", i)] = fmt.Sprintf(`package x%d

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Handler%d answers with a JSON list.
func Handler%d(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.URL.Path, "/")
	json.NewEncoder(w).Encode(parts)
}
`, i, i, i)
	}
	for name, text := range tree {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// peer is one serve process and its MCP session over stdio.
type peer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	id    int
}

func start(bin string, env, args []string) (*peer, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &peer{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	p.lines.Buffer(make([]byte, 1<<20), 16<<20)
	if _, err := p.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "lspbroker", "version": "1"}}); err != nil {
		p.close()
		return nil, err
	}
	if err := p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *peer) send(msg any) error {
	raw, _ := json.Marshal(msg)
	_, err := p.stdin.Write(append(raw, '\n'))
	return err
}

// request sends one request and reads up to its answer.
func (p *peer) request(method string, params any) (json.RawMessage, error) {
	p.id++
	if err := p.send(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for p.lines.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(p.lines.Bytes(), &m) != nil || m.ID == nil || *m.ID != p.id {
			continue
		}
		if len(m.Error) > 0 {
			return nil, errors.New(string(m.Error))
		}
		return m.Result, nil
	}
	return nil, fmt.Errorf("serve ended: %v", p.lines.Err())
}

// call calls a tool and returns its text.
func (p *peer) call(tool string, args map[string]any) (string, error) {
	raw, err := p.request("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	if r.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}

func (p *peer) close() {
	p.stdin.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// brokerPIDOf is the pid of the broker of the runtime folder, 0 if none.
func brokerPIDOf(runtime string) int {
	data, err := os.ReadFile(filepath.Join(runtime, "builtin-tools", "lsp-broker.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "lspbroker:", msg)
	os.Exit(2)
}
