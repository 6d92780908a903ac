package evaltool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// lastInt is the integer on a result's last line (a pid a cell printed).
func lastInt(t *testing.T, text string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(text[strings.LastIndex(text, "\n")+1:]))
	if err != nil {
		t.Fatalf("no number at the end of:\n%s", text)
	}
	return n
}

// dying is an Environment whose kernel is a real interpreter that writes a
// long traceback and exits before it is ready.
type dying struct{}

func (dying) Prepare(cmd *exec.Cmd) error {
	cmd.Args = []string{cmd.Args[0], "-c", "import os\nos.write(2, b'noise line\\n' * 5000 + b'Traceback (most recent call last):\\nImportError: kernel boom\\n')\nos._exit(1)"}
	return nil
}

// Item 1 (code review §2.3): a kernel that dies at once is reported with
// its traceback's last line, every time; before, stderr was read while
// cmd.Wait closed the pipe and the line could be missing.
func TestKernelDeathQuotesTraceback(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	root := t.TempDir()
	var failed atomic.Int32
	for i := range 10 {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				h := eval.NewHost(root, eval.Config{Python: python, Environment: dying{}})
				_, err := h.Run(context.Background(), "python", "1+1", false, nil)
				h.Close()
				if err == nil || !strings.Contains(err.Error(), "ImportError: kernel boom") {
					failed.Add(1)
					t.Errorf("round %d: the error does not quote the traceback: …%s", i, tailOf(err))
				}
			})
		}
		wg.Wait()
	}
	t.Logf("%d of 80 errors without the traceback", failed.Load())
}

// H4: tool() from 8 threads, 50 calls each: every reply is its own call's,
// and the cell ends well within its clock (before: it hung until the
// inactivity budget and the kernel was lost).
func TestToolFromThreads(t *testing.T) {
	r := newRun(t, eval.Config{Inactivity: 20 * time.Second})
	for i := range 50 {
		os.WriteFile(filepath.Join(r.Root(), fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("content %d\n", i)), 0o644)
	}
	code := `from concurrent.futures import ThreadPoolExecutor
def job(t):
    bad = 0
    for i in range(50):
        k = (i * 7 + t) % 50
        r = tool('read', {'path': 'f%d.txt' % k})
        if ('content %d\n' % k) not in r['content']:
            bad += 1
    return bad
with ThreadPoolExecutor(8) as ex:
    bad = sum(ex.map(job, range(8)))
'mismatched: %d' % bad`
	res, text := cell(t, r, tiers.Normal, code)
	want(t, text, "'mismatched: 0'", "kernel state: preserved")
	if er := res.StructuredContent.(evaltool.EvalResult); er.ToolCallsTotal != 400 || len(er.ToolCalls) != 50 {
		t.Fatalf("%d tool calls recorded (%d listed), want 400", er.ToolCallsTotal, len(er.ToolCalls))
	}
	want(t, text, "tool calls: 400")
	_, text = cell(t, r, tiers.Normal, "bad")
	want(t, text, "kernel state: preserved", "0")
}

// H4: a thread that prints or calls tool() after its cell returned is never
// billed silently to a later cell.
func TestLateThreads(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import threading, time\ndef late(cell):\n    time.sleep(0.4)\n    print('LATE PRINT FROM CELL', cell)\n    open('printed-%d' % cell, 'w').close()\nthreading.Thread(target=late, args=(1,)).start()\n'started'")
	want(t, text, "'started'")
	wantNot(t, text, "LATE", "printed before its time")
	_, text = cell(t, r, tiers.Normal, "import time\ntime.sleep(1)\n'second'")
	want(t, text, "LATE PRINT FROM CELL 1", "cell 1", "'second'")
	// Printed while no cell runs: the next cell shows it, with a note.
	if res, text := cell(t, r, tiers.Normal, "threading.Thread(target=late, args=(3,)).start()"); res.IsError {
		t.Fatalf("starting the thread: %s", text)
	}
	testenv.WaitFor(t, time.Minute, "the late print", func() bool {
		_, err := os.Stat(filepath.Join(r.Root(), "printed-3"))
		return err == nil
	})
	_, text = cell(t, r, tiers.Normal, "'third'")
	want(t, text, "LATE PRINT FROM CELL 3", "cell 3", "'third'")
	// A tool call from a thread whose cell returned is refused, not run
	// under the next cell.
	if res, text := cell(t, r, tiers.Normal, "got = []\ndef late_tool():\n    time.sleep(0.4)\n    try:\n        tool('read', {'path': 'notes.txt'})\n        got.append('ran')\n    except ToolError as e:\n        got.append(str(e))\nthreading.Thread(target=late_tool).start()"); res.IsError {
		t.Fatalf("starting the thread: %s", text)
	}
	res, text := cell(t, r, tiers.Normal, "time.sleep(1)\ngot")
	want(t, text, "after that cell returned")
	if n := len(res.StructuredContent.(evaltool.EvalResult).ToolCalls); n != 0 {
		t.Fatalf("a late thread's call was billed to this cell: %s", text)
	}
}

// H4: "ignored the interrupt" is said only when the kernel did not take
// it; a cell that catches KeyboardInterrupt and goes on is described as
// that.
func TestInterruptWording(t *testing.T) {
	r := newRun(t, eval.Config{Inactivity: 500 * time.Millisecond})
	_, text := cell(t, r, tiers.Normal, "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass")
	want(t, text, "kernel state: lost")
	wantNot(t, text, "ignored", "a kernel that took the interrupt is said to have ignored it")
	want(t, text, "caught the interrupt")
	cells(t, r, "",
		check{"import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", []string{"kernel state: lost", "ignores the interrupt"}},
		check{"1+1", []string{"kernel state: lost", "2"}},
	)
}

// heapPeak samples this process's heap while f runs and returns the peak
// above the heap at the start.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// H5: 200 MB printed keeps this process's heap bounded (before: the
// whole output and its copies, several times 200 MB), and goes whole to
// the spill file the result names.
func TestFloodHeapBounded(t *testing.T) {
	r := newRun(t, eval.Config{OutputCap: 1 << 30})
	cell(t, r, tiers.Normal, "1")
	var res any
	var text string
	grew := heapPeak(func() {
		r, tx := cell(t, r, tiers.Normal, "import sys\ns = 'x' * 999 + '\\n'\nfor i in range(200_000):\n    sys.stdout.write(s)\n'end'")
		res, text = r.StructuredContent, tx
	})
	want(t, text, "'end'", "the whole output is in")
	spilled := res.(evaltool.EvalResult).Spilled
	if fi, err := os.Stat(spilled); err != nil || fi.Size() != 200_000_000 {
		t.Fatalf("spill file %s: %v %v", spilled, fi, err)
	}
	if grew > 64<<20 {
		t.Fatalf("200 MB of output grew the heap by %d MB", grew>>20)
	}
	t.Logf("heap peak above the start: %d MB", grew>>20)
}

// H5: output counts against a byte cap: an endless print loop is
// interrupted by it (before, every print reset the inactivity clock and
// only the hard cap ended it), the state kept, and the result says so.
func TestOutputCap(t *testing.T) {
	r := newRun(t, eval.Config{OutputCap: 4 << 20, HardCap: 60 * time.Second})
	cell(t, r, tiers.Normal, "kept = 1")
	_, text := cell(t, r, tiers.Normal, "import time\nwhile True:\n    print('y' * 1000)\n    time.sleep(0.0002)")
	want(t, text, "Interrupted: the cell printed over 4 MiB (the output cap)", "kernel state: preserved")
	_, text = cell(t, r, tiers.Normal, "kept")
	want(t, text, "kernel state: preserved", "1")
	// One print over the cap: the interrupt lands while the kernel sends
	// it, and waits for the message to be out.
	cells(t, r, "",
		check{"print('x' * 12_000_000)", []string{"Interrupted: the cell printed over 4 MiB (the output cap)", "KeyboardInterrupt", "kernel state: preserved"}},
		check{"kept", []string{"kernel state: preserved", "1"}},
	)
}

// H5: kernels run under a memory limit; numpy and pandas import under the
// default one; a cell over the limit gets MemoryError, the result says the
// limit was reached, and the kernel lives on.
func TestMemoryLimit(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import resource\nresource.getrlimit(resource.RLIMIT_AS)[0] >> 20")
	want(t, text, strconv.FormatInt(eval.DefaultMemoryLimit()>>20, 10))
	_, text = cell(t, r, tiers.Normal, "import numpy, pandas, matplotlib.pyplot\nnumpy.ones(10).sum()")
	want(t, text, "10.0")

	r = newRun(t, eval.Config{MemoryLimit: 1 << 30})
	cell(t, r, tiers.Normal, "kept = 1")
	_, text = cell(t, r, tiers.Normal, "x = bytearray(2 << 30)")
	want(t, text, "MemoryError", "memory limit (1 GiB)", "kernel state: preserved")
	_, text = cell(t, r, tiers.Normal, "kept")
	want(t, text, "kernel state: preserved", "1")
}

// M2: the structured result is cut as the text is (before, a large last
// expression went whole into structuredContent), and the rest is in the
// file it names.
func TestBigResultStructured(t *testing.T) {
	r := newRun(t, eval.Config{})
	res, text := cell(t, r, tiers.Normal, "'y' * 5_000_000")
	er := res.StructuredContent.(evaltool.EvalResult)
	if n := len(er.Result); n > 8000 {
		t.Fatalf("structured result holds %d characters", n)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if len(b) > 20000 {
		t.Fatalf("structured content is %d bytes", len(b))
	}
	want(t, text, "characters cut", er.ResultSpilled)
	if fi, err := os.Stat(er.ResultSpilled); err != nil || fi.Size() != 5_000_002 {
		t.Fatalf("result spill %s: %v %v", er.ResultSpilled, fi, err)
	}
	res, text = cell(t, r, tiers.Normal, "raise ValueError('z' * 3_000_000)")
	er = res.StructuredContent.(evaltool.EvalResult)
	want(t, text, "ValueError", "characters cut")
	if n := len(er.Error); n > 8000 || er.ErrorSpilled == "" {
		t.Fatalf("structured error holds %d characters, spilled to %q", n, er.ErrorSpilled)
	}
}

// M1: a message over the frame cap neither kills the kernel nor hangs the
// call: a 70 MB print and a 70 M-character last expression come back cut,
// with the state preserved.
// The inactivity budget only bounds a hang here: under -race on a loaded
// machine, building and sending a 70 MB value can take longer than 30 s.
func TestOverFrameCap(t *testing.T) {
	r := newRun(t, eval.Config{Inactivity: 2 * time.Minute, OutputCap: 1 << 30})
	cell(t, r, tiers.Normal, "kept = 1")
	cells(t, r, "",
		check{"print('x' * 70_000_000)", []string{"kernel state: preserved", "characters cut"}},
		check{"'y' * 70_000_000", []string{"kernel state: preserved", "characters cut", "'yyy"}},
		check{"kept", []string{"kernel state: preserved", "1"}},
	)
}

// forge writes a frame to every pipe the kernel holds besides its stdout
// and stderr, in
// both the old and the new framing, as a module that meant harm would.
const forge = `import os, stat
def forge(body):
    outs = {os.fstat(1).st_ino, os.fstat(2).st_ino}
    for fd in range(3, 1024):
        try:
            st = os.fstat(fd)
            if not stat.S_ISFIFO(st.st_mode) or st.st_ino in outs:
                continue
            os.write(fd, b'Content-Length: %d\r\n\r\n' % len(body) + body)
            os.write(fd, b'\n' + body + b'\n')
        except OSError:
            pass
`

// M3: forged frames on the kernel's protocol: a forged done does not end
// the cell or shift later results; a forged stream injects nothing; junk
// does not kill the kernel.
func TestForgedFrames(t *testing.T) {
	r := newRun(t, eval.Config{})
	cell(t, r, tiers.Normal, forge)
	cells(t, r, "",
		check{"forge(b'{\"type\":\"done\",\"result\":\"FORGED\"}')\n'real result of cell'", []string{"'real result of cell'", "Dropped: "}},
		check{"'second'", []string{"'second'"}},
		check{"'third'", []string{"'third'"}},
	)
	_, text := cell(t, r, tiers.Normal, "forge(b'{\"type\":\"stream\",\"name\":\"stdout\",\"text\":\"INJECTED\"}')\n'fourth'")
	want(t, text, "'fourth'")
	wantNot(t, text, "INJECTED", "a forged stream frame reached the output")
	cell(t, r, tiers.Normal, "forge(b'\\xff\\x00 junk: 12\\r\\n not json at all')")
	_, text = cell(t, r, tiers.Normal, "'fifth'")
	want(t, text, "kernel state: preserved", "'fifth'")
	// The channel is on fds above 200 and closed to children, whatever
	// close_fds says.
	// (The driver's globals, reached through a function of its own: cells
	// run in a __main__ module apart.)
	_, text = cell(t, r, tiers.Normal, `import subprocess
driver = display.__globals__
mine = {fd: 'pipe:[%d]' % os.fstat(fd).st_ino for fd in (driver['_IN'], driver['_OUT'])}
child = subprocess.run(['sh', '-c', 'for f in /proc/$$/fd/*; do readlink $f; done'], close_fds=False, capture_output=True, text=True).stdout.split()
(sorted(mine), [p for p in mine.values() if p in child])`)
	want(t, text, "([200, 201], [])")
}

// L5: a child that called setsid ends at reset (before, it outlived the
// kernel, reset and serve).
func TestResetEndsSetsidChild(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import subprocess\nsubprocess.Popen(['setsid', 'sleep', '202']).pid")
	pid := lastInt(t, text)
	testenv.WaitFor(t, time.Minute, "setsid exec'ing sleep", func() bool {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return string(comm) == "sleep\n"
	})
	args, _ := json.Marshal(map[string]any{"code": "1", "description": "a step of the test at hand", "reset": true})
	if _, err := r.Call(context.Background(), tiers.Normal, "eval", args); err != nil {
		t.Fatal(err)
	}
	if !testenv.Gone(pid) {
		t.Fatal("a setsid child of a cell outlived reset")
	}
}

// Code review §2.1: an output budget under 800 characters no longer
// panics on every cell.
func TestTinyBudget(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	r, err := builtintools.NewRun(builtintools.Options{Root: t.TempDir(), Without: []string{"lsp", "structural"},
		Settings: map[string]any{"eval": eval.Config{Python: python}}, OutputBudget: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, text := cell(t, r, tiers.Normal, "1+1")
	if res.IsError {
		t.Fatalf("1+1 under a 200-character budget: %s", text)
	}
	want(t, text, "2")
	res, text = cell(t, r, tiers.Normal, "for i in range(1000):\n    print('line', i)")
	if res.IsError || len([]rune(text)) > 200+250 {
		t.Fatalf("a flood under a 200-character budget (%d characters): %s", len([]rune(text)), text)
	}
	want(t, text, "line 0")
}

func tailOf(err error) string {
	if err == nil {
		return "no error"
	}
	s := err.Error()
	return s[max(0, len(s)-200):]
}

// H4 and M3 in the JavaScript kernel: tool() calls in parallel with
// Promise.all each get their own reply; a timer a cell left behind prints
// into a later cell under a note; a cell waiting on a promise that never
// settles is interrupted with its context kept.
func TestJavaScriptProtocol(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{Inactivity: time.Second})
	for i := range 5 {
		os.WriteFile(filepath.Join(r.Root(), fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("content %d\n", i)), 0o644)
	}
	text := jsCell(t, r, "const got = await Promise.all(Array.from({length: 50}, (_, i) => tool('read', {path: 'f' + (i % 5) + '.txt'})))\ngot.filter((g, i) => g.content.includes('content ' + (i % 5))).length")
	want(t, text, "50", "tool calls: 50")
	jsCell(t, r, "let kept = 7\nsetTimeout(() => console.log('LATE JS FROM CELL 2'), 300)")
	cells(t, r, "javascript",
		check{"await new Promise((r) => setTimeout(r, 800))\n'second'", []string{"LATE JS FROM CELL 2", "cell 2", "'second'"}},
		check{"await new Promise(() => {})", []string{"Interrupted: no output for 1s", "kernel state: preserved"}},
		check{"kept", []string{"kernel state: preserved", "7"}},
	)
}

// What a cell's subprocesses print to the kernel's real stdout and stderr
// is that cell's, every time (a cell-end mark says where its share ends);
// what one prints after its cell returned comes in a later cell under a
// note.
func TestChildOutputStaysInItsCell(t *testing.T) {
	r := newRun(t, eval.Config{})
	cell(t, r, tiers.Normal, "import subprocess")
	for i := range 30 {
		_, text := cell(t, r, tiers.Normal, fmt.Sprintf("subprocess.run(['sh', '-c', 'echo out %d; echo err %d >&2'])\nNone", i, i))
		want(t, text, fmt.Sprintf("out %d\nerr %d", i, i))
		if strings.Contains(text, "returned") {
			t.Fatalf("round %d: a cell's own child output is called late:\n%s", i, text)
		}
	}
	cell(t, r, tiers.Normal, "subprocess.Popen(['sh', '-c', 'sleep 0.3; echo late child'])\nNone")
	// The child prints on the kernel's real stdout, a pipe this process
	// reads with no event a test can wait on; bytes read after the next
	// cell began would be that cell's own. So this waits, on the clock,
	// well past the child's print.
	time.Sleep(time.Second)
	_, text := cell(t, r, tiers.Normal, "'next'")
	want(t, text, "late child", "returned", "'next'")
}
