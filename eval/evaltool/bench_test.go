package evaltool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// The Python kernel beside Jupyter's ipykernel driven by jupyter_client, in
// one run:
//
//	go test -run XXX -bench 'Kernel' -benchtime 100x -count 3 ./eval/evaltool/
//
// ready: from start to the first cell's answer, median of five starts; 1+1:
// a cell's round trip through Run.Call; bridge: a cell whose tool('read') is
// the only work, minus a plain cell.

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func BenchmarkKernelOurs(b *testing.B) {
	if _, err := os.Stat(python); err != nil {
		b.Skip("no " + python)
	}
	root := b.TempDir()
	os.WriteFile(root+"/f.txt", []byte("x\n"), 0o644)
	var ready []time.Duration
	for i := 0; i < 5; i++ {
		h := eval.NewHost(root, eval.Config{Python: python})
		t0 := time.Now()
		if _, err := h.Run(context.Background(), "python", "1+1", false, nil); err != nil {
			b.Fatal(err)
		}
		ready = append(ready, time.Since(t0))
		h.Close()
	}
	r := newRunB(b, root)
	run := func(code string) time.Duration {
		args, _ := json.Marshal(map[string]any{"code": code, "description": "a step of the benchmark at hand"})
		t0 := time.Now()
		res, err := r.Call(context.Background(), tiers.Normal, "eval", args)
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatal(err)
		}
		return d
	}
	run("1+1")
	var plain, bridge []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain = append(plain, run("1+1"))
		bridge = append(bridge, run("tool('read', {'path': 'f.txt'})['kind']"))
	}
	b.ReportMetric(float64(p50(ready).Microseconds())/1000, "ready-ms")
	b.ReportMetric(float64(p50(plain).Microseconds())/1000, "1+1-p50-ms")
	b.ReportMetric(float64((p50(bridge)-p50(plain)).Microseconds())/1000, "bridge-p50-ms")
}

// BenchmarkKernelNode is the JavaScript kernel: start to the first answer,
// and 1+1.
func BenchmarkKernelNode(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("no node")
	}
	root := b.TempDir()
	var ready, one []time.Duration
	for i := 0; i < 5; i++ {
		h := eval.NewHost(root, eval.Config{})
		t0 := time.Now()
		if _, err := h.Run(context.Background(), "javascript", "1+1", false, nil); err != nil {
			b.Fatal(err)
		}
		ready = append(ready, time.Since(t0))
		h.Close()
	}
	h := eval.NewHost(root, eval.Config{})
	defer h.Close()
	h.Run(context.Background(), "javascript", "1+1", false, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := h.Run(context.Background(), "javascript", "1+1", false, nil); err != nil {
			b.Fatal(err)
		}
		one = append(one, time.Since(t0))
	}
	b.ReportMetric(float64(p50(ready).Microseconds())/1000, "ready-ms")
	b.ReportMetric(float64(p50(one).Microseconds())/1000, "1+1-p50-ms")
}

// jupyterBench starts ipykernel with jupyter_client argv[2] times and runs
// argv[1] cells of 1+1 in the last one. ready ends at wait_for_ready (the
// kernel_info reply), before any cell; first ends when the first 1+1 has
// answered. Every hook is quiet: the default one writes the cell's "2" to
// stdout with no newline, in front of the figures. The figures are the one
// line that starts with "ipykernel".
const jupyterBench = `
import sys, time
from jupyter_client.manager import KernelManager

def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]

def one_plus_one(kc):
    out = []
    reply = kc.execute_interactive("1+1", timeout=60, output_hook=out.append)
    got = [m["content"]["data"]["text/plain"] for m in out if m["header"]["msg_type"] == "execute_result"]
    if reply["content"]["status"] != "ok" or got != ["2"]:
        sys.exit("1+1 answered %r, %r" % (reply["content"]["status"], got))

n, starts = int(sys.argv[1]), int(sys.argv[2])
ready, first = [], []
for i in range(starts):
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    ready.append(time.perf_counter() - t0)
    one_plus_one(kc)
    first.append(time.perf_counter() - t0)
    if i < starts - 1:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
times = []
for _ in range(n):
    t = time.perf_counter()
    one_plus_one(kc)
    times.append(time.perf_counter() - t)
print("ipykernel", median(ready) * 1000, median(first) * 1000, median(times) * 1000)
kc.stop_channels()
km.shutdown_kernel(now=True)
`

// BenchmarkKernelIPyKernel reports, as BenchmarkKernelOurs does, the median
// of five starts and the p50 of the 1+1 round trips after them: ready-ms to
// the kernel_info reply (no cell; ours has answered its first cell when its
// ready ends), first-ms to the first 1+1's answer.
func BenchmarkKernelIPyKernel(b *testing.B) {
	if err := exec.Command(python, "-c", "import ipykernel, jupyter_client").Run(); err != nil {
		b.Skipf("ipykernel with jupyter_client is not installed here (scripts/install-eval.sh): %v", err)
	}
	cmd := exec.Command(python, "-c", jupyterBench, strconv.Itoa(max(b.N, 20)), "5")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%v: %s", err, stderr.String())
	}
	var f []string
	for _, line := range strings.Split(string(out), "\n") {
		if g := strings.Fields(line); len(g) == 4 && g[0] == "ipykernel" {
			f = g[1:]
		}
	}
	if f == nil {
		b.Fatalf("no figures in the driver's output %q", out)
	}
	var v [3]float64
	for i, s := range f {
		if v[i], err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatalf("figure %q in %q: %v", s, out, err)
		}
	}
	b.ReportMetric(v[0], "ready-ms")
	b.ReportMetric(v[1], "first-ms")
	b.ReportMetric(v[2], "1+1-p50-ms")
}

func newRunB(b *testing.B, root string) *registryRun {
	r, err := newRunAt(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

// A notebook of 20 cells run whole, from a fresh kernel each time: by eval
// (`notebook`, `reset: true`, outputs written back) and by Jupyter's
// nbclient with ipykernel (kernel start included, as in nbconvert):
//
//	go test -run XXX -bench 'Notebook20' -benchtime 5x ./eval/evaltool/
func notebook20(b *testing.B, root, name string) string {
	var cells []map[string]any
	cells = append(cells, codeCell("import math\ntotal = 0"))
	for i := 1; i < 20; i++ {
		cells = append(cells, codeCell("total += math.sqrt("+strconv.Itoa(i)+")\nprint('step', "+strconv.Itoa(i)+")\nround(total, 3)"))
	}
	return writeNotebook(b, root, name, "python", cells...)
}

func BenchmarkNotebook20Eval(b *testing.B) {
	root := b.TempDir()
	r := newRunB(b, root)
	notebook20(b, root, "nb.ipynb")
	args, _ := json.Marshal(map[string]any{"notebook": "nb.ipynb", "reset": true, "description": "run the benchmark's notebook from scratch"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := r.Call(context.Background(), tiers.Normal, "eval", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkNotebook20Nbclient(b *testing.B) {
	root := b.TempDir()
	path := notebook20(b, root, "nb.ipynb")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nbclientRun(b, path, root)
	}
}
