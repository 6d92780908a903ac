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
//	go test -run XXX -bench 'Kernel' -benchtime 200x -count 3 ./eval/evaltool/
//
// ready: from start to the first answer; 1+1: a cell's round trip through
// Run.Call; bridge: a cell whose tool('read') is the only work, minus a
// plain cell.

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

const jupyterBench = `
import sys, time
from jupyter_client.manager import KernelManager
t0 = time.time()
km = KernelManager(kernel_name="python3")
km.start_kernel()
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=60)
kc.execute_interactive("1+1", timeout=60)
ready = time.time() - t0
times = []
for _ in range(int(sys.argv[1])):
    t = time.time()
    kc.execute_interactive("1+1", timeout=60, output_hook=lambda m: None)
    times.append(time.time() - t)
times.sort()
print(ready * 1000, times[len(times) // 2] * 1000)
kc.stop_channels()
km.shutdown_kernel(now=True)
`

func BenchmarkKernelIPyKernel(b *testing.B) {
	out, err := exec.Command(python, "-c", jupyterBench, strconv.Itoa(max(b.N, 20))).Output()
	if err != nil {
		b.Skipf("ipykernel with jupyter_client is not installed here (scripts/install-eval.sh): %v", err)
	}
	f := strings.Fields(string(out))
	ready, _ := strconv.ParseFloat(f[0], 64)
	one, _ := strconv.ParseFloat(f[1], 64)
	b.ReportMetric(ready, "ready-ms")
	b.ReportMetric(one, "1+1-p50-ms")
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
