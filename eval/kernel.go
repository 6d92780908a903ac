// Package eval runs persistent interpreter kernels for the eval tool: one
// Python kernel (and one Node kernel) per run, started on first use, whose
// variables, imports and data persist across cells. A kernel is a small
// driver shipped in the binary (kernels/python.py, kernels/node.js) that
// talks to Go over two pipes of its own (wire.go), moved out of reach of
// cells and their children: no socket, no port, and the program's prints
// never mix with the protocol.
//
// A cell's limits: an inactivity budget that output resets and that is
// paused while a tool() bridge call is pending, a hard cap that never
// pauses, and a cap on the bytes it may print. Each interrupts the cell
// (SIGINT, then the kernel if the cell does not end); every result says
// whether the kernel's state was preserved. Output is kept in memory only
// up to a bound, the rest streamed to a file. A kernel runs under an
// address-space limit.
package eval

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/pyenv"
)

//go:embed kernels/python.py
var pythonDriver []byte

//go:embed kernels/node.js
var nodeDriver []byte

// Languages eval runs. TypeScript cells run in the JavaScript kernel,
// compiled first: the two share one context.
var Languages = []string{"python", "javascript", "typescript"}

// Config configures the kernels of a run.
type Config struct {
	// Python is the interpreter; default the checkout's .venv/bin/python or
	// venv/bin/python, else python3 on PATH. Node is node's (default node
	// on PATH).
	Python, Node string
	// TypeScript is the TypeScript compiler's package folder (or its
	// lib/typescript.js) for typescript cells; default the checkout's
	// node_modules/typescript, else the one beside tsc or
	// typescript-language-server on PATH.
	TypeScript string
	// Inactivity is how long a cell may go without output, bridge calls
	// not counted (default 5 minutes); HardCap bounds a cell however busy
	// (default 60 minutes).
	Inactivity, HardCap time.Duration
	// OutputCap bounds the bytes one cell may print (default 64 MiB;
	// negative for none): past it the cell is interrupted, as by a clock,
	// and the rest is dropped.
	OutputCap int64
	// MemoryLimit is each kernel's address-space limit in bytes
	// (RLIMIT_AS; default DefaultMemoryLimit; negative for none).
	MemoryLimit int64
	// Environment, when the harness gives one, is where kernels run (EV-6);
	// without one they run on the host. eval never creates one.
	Environment Environment
}

// DefaultOutputCap is Config.OutputCap's default.
const DefaultOutputCap = 64 << 20

// DefaultMemoryLimit is Config.MemoryLimit's default: 8 GiB, or three
// quarters of the machine's memory when that is less (never under 2 GiB).
// numpy, pandas and matplotlib import well within it.
func DefaultMemoryLimit() int64 {
	limit := int64(8 << 30)
	if ram := totalRAM() * 3 / 4; ram > 0 && ram < limit {
		limit = max(ram, 2<<30)
	}
	return limit
}

// Environment is an isolated place a harness runs kernels in: a container,
// a sandbox. Prepare rewrites the kernel's command so that it starts there;
// it must keep cmd.ExtraFiles (the kernel's channel, fds 3 and 4), the
// arguments after the driver's path, and the process group the command
// gets, so that ending the kernel ends what runs inside. The memory limit
// applies to the process the command starts.
type Environment interface {
	Prepare(cmd *exec.Cmd) error
}

// Host is a run's kernels. Calls run one at a time (the eval tool is
// serial); Close ends every kernel and its children.
type Host struct {
	root string
	cfg  Config
	tmp  string

	mu      sync.Mutex
	kernels map[string]*kernel // by language
	cells   int
	lost    map[string]string // why a language's last kernel lost its state, for the next result
	closed  bool
}

// NewHost makes a host over root; it starts nothing.
func NewHost(root string, cfg Config) *Host {
	if cfg.Inactivity <= 0 {
		cfg.Inactivity = 5 * time.Minute
	}
	if cfg.HardCap <= 0 {
		cfg.HardCap = 60 * time.Minute
	}
	if cfg.OutputCap == 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit()
	}
	return &Host{root: root, cfg: cfg, kernels: map[string]*kernel{}, lost: map[string]string{}}
}

// Close ends the kernels.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for lang, k := range h.kernels {
		k.stop()
		delete(h.kernels, lang)
	}
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
	return nil
}

// kernel is one running kernel. The reader goroutine routes each message
// by its cell: to the running cell, to the late output of an ended one, or
// nowhere (M3).
type kernel struct {
	lang  string
	p     *proc.Process
	toK   *os.File
	wmu   sync.Mutex // one message at a time to the kernel
	limit int64      // the address-space limit set, 0 for none
	ready chan message
	dead  chan struct{} // closed once the kernel exited and its output is read

	mu         sync.Mutex
	cur        *cellRun // the running cell, nil between cells
	last       int      // the last cell sent to this kernel
	first      int      // the first cell number this kernel may see
	late       lateOutput
	dropped    int // messages dropped as forged or junk
	synced     [2]int
	marks      chan struct{} // a cell-end mark passed
	markPrefix []byte
	stdout     *childStream
	stderr     *childStream
}

// cellRun is the running cell's state, filled by the reader goroutine and
// the kernel's stdout and stderr copiers.
type cellRun struct {
	n        int
	out      *capture
	result   *capture
	errText  *capture
	images   [][]byte
	imagesN  int
	origin   int  // whose output was written last: n, or an ended cell
	finished bool // its done message was routed
	acked    bool // it took the interrupt
	dropped  int  // the kernel's dropped count when the cell began

	ctl      chan message  // tool calls and done, for Run
	over     chan struct{} // closed when Run stops listening
	activity chan struct{} // output arrived
	capHit   chan struct{} // closed when the output cap was reached
	capOnce  sync.Once
}

// lateOutput is what the threads or processes of ended cells printed while
// no cell ran, for the next cell to show.
type lateOutput struct {
	text     []byte
	dropped  int64
	from, to int
}

const lateKeep = 64 << 10

func (h *Host) python() string {
	if h.cfg.Python != "" {
		return h.cfg.Python
	}
	if p := pyenv.Interpreter(h.root); p != "" {
		return p
	}
	return "python3"
}

// start runs a fresh kernel for lang and waits for it to be ready.
func (h *Host) start(ctx context.Context, lang string) (*kernel, error) {
	if h.tmp == "" {
		tmp, err := proc.TempDir("eval-")
		if err != nil {
			return nil, err
		}
		h.tmp = tmp
	}
	name, src := "kernel.py", pythonDriver
	if lang == "javascript" {
		name, src = "kernel.js", nodeDriver
	}
	driver := filepath.Join(h.tmp, name)
	if err := os.WriteFile(driver, src, 0o600); err != nil {
		return nil, err
	}
	var tok [8]byte
	rand.Read(tok[:])
	mark := hex.EncodeToString(tok[:])
	prog := h.python()
	cmd := exec.Command(prog, "-u", driver, mark)
	if lang == "javascript" {
		prog = h.cfg.Node
		if prog == "" {
			prog = "node"
		}
		cmd = exec.Command(prog, driver, mark)
	}
	cmd.Dir = h.root
	cmd.Env = append(os.Environ(), "MPLBACKEND=Agg", "PYTHONUNBUFFERED=1")
	// fd 3: the kernel reads requests; fd 4: it writes messages.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{inR, outW}
	closeAll := func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	}
	if env := h.cfg.Environment; env != nil {
		if err := env.Prepare(cmd); err != nil {
			closeAll()
			return nil, fmt.Errorf("the isolated environment could not take the kernel: %v", err)
		}
	}
	k := &kernel{lang: lang, toK: inW, ready: make(chan message, 1), dead: make(chan struct{}),
		marks: make(chan struct{}, 1), first: h.cells + 1, last: h.cells}
	k.synced = [2]int{h.cells, h.cells}
	prefix := []byte("\x00" + mark + ":")
	k.markPrefix = prefix
	k.stdout = &childStream{k: k, i: 0, scan: markScanner{prefix: prefix}}
	k.stderr = &childStream{k: k, i: 1, scan: markScanner{prefix: prefix}}
	p, err := proc.Start(cmd, proc.Options{Files: []*os.File{inR, outW}, Stdout: k.stdout, Stderr: k.stderr,
		TailBytes: 8 << 10, TailStdout: true})
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting the %s kernel (%s): %v", lang, prog, err)
	}
	k.p = p
	if lim := h.cfg.MemoryLimit; lim > 0 {
		// Before the driver is ready nothing of a cell has run. The soft
		// limit only: a cell (or a program it starts that needs more
		// address space, a JVM) may raise it.
		k.limit = limitMemory(p.Pid(), lim)
	}
	go k.read(outR)
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-k.ready:
		return k, nil
	case <-k.dead:
		return nil, fmt.Errorf("the %s kernel (%s) did not start (%s)%s", lang, prog, p.ExitStatus(), k.stderrEnd())
	case <-t.C:
		k.stop()
		return nil, fmt.Errorf("the %s kernel (%s) was not ready within 30 s%s", lang, prog, k.stderrEnd())
	case <-ctx.Done():
		k.stop()
		return nil, context.Cause(ctx)
	}
}

// stderrEnd quotes the last line the kernel wrote to stderr (a
// traceback's), read to the end once the kernel is gone.
func (k *kernel) stderrEnd() string {
	lifetime.Await(context.Background(), k.dead, 5*time.Second)
	if s := k.stderrLast(); s != "" {
		return ": " + s
	}
	return ""
}

// stderrLast is the last line of the kernel's stderr, without the
// drivers' cell-end marks.
func (k *kernel) stderrLast() string {
	tail := k.p.Tail().String()
	var b strings.Builder
	var scan markScanner
	scan.prefix = k.markPrefix
	scan.scan([]byte(tail), func(p []byte) { b.Write(p) }, func(int) {})
	return lastLine(b.String())
}

// read routes the kernel's messages until its channel ends. A channel that
// fails, or ends while the kernel lives on, ends the kernel at once.
func (k *kernel) read(r *os.File) {
	skipped, err := readLines(r, k.route)
	r.Close()
	k.mu.Lock()
	k.dropped += skipped
	k.mu.Unlock()
	if errors.Is(err, io.EOF) {
		lifetime.Await(context.Background(), k.p.Exited(), time.Second)
	}
	k.p.Kill()
	k.toK.Close()
	<-k.p.Done()
	close(k.dead)
}

func (k *kernel) route(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Type == "" {
		k.mu.Lock()
		k.dropped++
		k.mu.Unlock()
		return
	}
	k.mu.Lock()
	c := k.cur
	valid := m.Cell >= k.first && m.Cell <= k.last
	switch {
	case m.Type == "ready" && m.Cell == 0 && k.last < k.first:
		k.mu.Unlock()
		select {
		case k.ready <- m:
		default:
		}
		return
	case !valid:
		k.dropped++
	case m.Type == "stream":
		k.output(m.Cell, m.Text, false)
	case c == nil || m.Cell != c.n || c.finished:
		if m.Type == "tool_call" {
			k.mu.Unlock()
			k.send(map[string]any{"type": "tool_result", "id": m.ID, "error": fmt.Sprintf(
				"tool(%q) was called by a thread of cell %d after that cell returned; a cell's tool calls are answered only while it runs", m.Name, m.Cell)})
			return
		}
		// A late done, result, figure or interrupt has no cell to go to.
	case m.Type == "image":
		if png, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
			c.imagesN++
			if len(c.images) < maxImages {
				c.images = append(c.images, png)
			}
		}
	case m.Type == "result":
		c.result.WriteString(m.Text)
	case m.Type == "error":
		c.errText.WriteString(m.Text)
	case m.Type == "interrupted":
		c.acked = true
	case m.Type == "done" || m.Type == "tool_call":
		if m.Type == "done" {
			c.finished = true
		}
		k.mu.Unlock()
		select {
		case c.ctl <- m:
		case <-c.over:
			if m.Type == "tool_call" {
				k.send(map[string]any{"type": "tool_result", "id": m.ID, "error": "the cell ended before this call was answered"})
			}
		}
		return
	default:
		k.dropped++
	}
	k.mu.Unlock()
}

// maxImages bounds the figures one result carries.
const maxImages = 20

// output writes text from cell where it belongs: the running cell's
// output, under a note when an ended cell's thread printed it, or the late
// output the next cell shows. child says it came from the kernel's real
// stdout or stderr, where the cell-end marks, not done, end a cell's share.
// k.mu is held.
func (k *kernel) output(cell int, text string, child bool) {
	c := k.cur
	switch {
	case c != nil && cell == c.n && (child || !c.finished):
	case c != nil && !c.finished && cell < c.n:
	default:
		k.late.add(cell, text)
		return
	}
	if cell != c.origin {
		note := fmt.Sprintf("[cell %d:]\n", c.n)
		if cell != c.n {
			note = fmt.Sprintf("[printed by what cell %d left running, after it returned:]\n", cell)
		}
		if c.out.chars > 0 {
			note = "\n" + note
		}
		c.out.WriteString(note)
		c.origin = cell
	}
	c.out.WriteString(text)
	select {
	case c.activity <- struct{}{}:
	default:
	}
	if c.out.over() {
		c.capOnce.Do(func() { close(c.capHit) })
	}
}

func (l *lateOutput) add(cell int, text string) {
	if l.from == 0 || cell < l.from {
		l.from = cell
	}
	l.to = max(l.to, cell)
	n := min(len(text), lateKeep-len(l.text))
	l.text = append(l.text, cutBytes(text, n)...)
	l.dropped += int64(len(text) - len(cutBytes(text, n)))
}

// childStream receives the kernel's real stdout or stderr: what a cell's
// child processes print. A cell-end mark says where a cell's share ends.
type childStream struct {
	k    *kernel
	i    int // 0 stdout, 1 stderr
	scan markScanner
}

func (s *childStream) Write(p []byte) (int, error) {
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	s.scan.scan(p, func(b []byte) {
		// Bytes after the mark of cell N belong to cell N+1 if it runs,
		// else they are late output of cell N.
		cell := s.k.synced[s.i] + 1
		if c := s.k.cur; c == nil || c.n != cell {
			cell--
		}
		if cell >= s.k.first {
			s.k.output(cell, string(b), true)
		}
	}, func(cell int) {
		if cell > s.k.synced[s.i] && cell <= s.k.last {
			s.k.synced[s.i] = cell
			select {
			case s.k.marks <- struct{}{}:
			default:
			}
		}
	})
	return len(p), nil
}

func (k *kernel) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	k.wmu.Lock()
	defer k.wmu.Unlock()
	_, err = k.toK.Write(b)
	return err
}

// stop ends the kernel, what its cells started with it.
func (k *kernel) stop() {
	k.toK.Close()
	k.p.Kill()
	lifetime.Await(context.Background(), k.dead, 5*time.Second)
}

// Bridge runs a tool for a cell; it returns the tool's data or text, or an
// error whose text the cell's exception carries.
type Bridge func(ctx context.Context, name string, args json.RawMessage) (any, error)

// ToolCall is one tool() call a cell made.
type ToolCall struct {
	Name  string `json:"name"`
	MS    int64  `json:"ms"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// CellResult is what a cell did.
type CellResult struct {
	Cell int
	// Output is stdout and stderr in order, with displays in place, and
	// what ended cells' threads printed, under a note.
	Output Text
	// Result is the last expression's repr, when it has one.
	Result Text
	// Error is the exception as a short traceback, lines the cell's own,
	// and why the kernel died when it did.
	Error Text
	// Images are the figures, at most 20; ImageN counts them all.
	Images    [][]byte
	ImageN    int
	ToolCalls []ToolCall
	// State is preserved, or lost with why.
	State string
	// Interrupted says which limit stopped the cell.
	Interrupted string
	// Memory says the cell ran out of memory, and under which limit.
	Memory string
	// Stopped says where a cell of several statements stopped when not all
	// of it ran: which statement, why, and what did not run.
	Stopped *Stop
	// Dropped counts the lines on the kernel's channel, while the cell
	// ran, that were not the driver's messages for it (M3).
	Dropped    int
	DurationMS int64
}

// Run runs one cell in lang's kernel ("" is python). reset discards the
// kernel first.
func (h *Host) Run(ctx context.Context, lang, code string, reset bool, bridge Bridge) (*CellResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, lifetime.ErrClosed
	}
	if lang == "" {
		lang = "python"
	}
	var compiler string
	if lang == "typescript" {
		var err error
		if compiler, err = h.typescript(); err != nil {
			return nil, err
		}
		lang = "javascript"
	}
	state := "preserved"
	if why := h.lost[lang]; why != "" {
		state = "lost: " + why
		delete(h.lost, lang)
	}
	if k := h.kernels[lang]; reset && k != nil {
		k.stop()
		delete(h.kernels, lang)
		state = "reset: a fresh kernel, as asked"
	}
	k := h.kernels[lang]
	if k == nil {
		var err error
		if k, err = h.start(ctx, lang); err != nil {
			return nil, err
		}
		h.kernels[lang] = k
	}
	h.cells++
	res := &CellResult{Cell: h.cells, State: state}
	t0 := time.Now()
	c := k.begin(h.cells, h.tmp, max(h.cfg.OutputCap, 0))
	defer func() {
		k.end(c, res)
		res.DurationMS = time.Since(t0).Milliseconds()
	}()
	req := map[string]any{"type": "execute", "code": code, "cell": c.n}
	if compiler != "" {
		req["typescript"] = compiler
	}
	if err := k.send(req); err != nil {
		h.died(lang, k, res)
		return res, nil
	}
	inactivity := time.NewTimer(h.cfg.Inactivity)
	defer inactivity.Stop()
	hard := time.NewTimer(h.cfg.HardCap)
	defer hard.Stop()
	// Bridge calls end with the hard cap too: the clocks are not read
	// while one runs.
	hardCtx, cancel := context.WithDeadline(ctx, t0.Add(h.cfg.HardCap))
	defer cancel()
	interrupted := false
	var grace <-chan time.Time
	interrupt := func(why string) {
		if interrupted {
			return
		}
		interrupted = true
		res.Interrupted = why
		k.p.Signal(syscall.SIGINT)
		grace = time.After(interruptGrace)
	}
	capHit, cancelled := c.capHit, ctx.Done()
	for {
		select {
		case m := <-c.ctl:
			switch m.Type {
			case "tool_call":
				// The inactivity budget pauses while the bridge works.
				inactivity.Stop()
				tc := ToolCall{Name: m.Name}
				start := time.Now()
				var data any
				err := errors.New("tool() is not available here")
				if bridge != nil {
					data, err = bridge(hardCtx, m.Name, m.Args)
				}
				tc.MS = time.Since(start).Milliseconds()
				reply := map[string]any{"type": "tool_result", "id": m.ID}
				if err != nil {
					tc.Error = err.Error()
					reply["error"] = err.Error()
				} else {
					tc.OK = true
					reply["result"] = data
				}
				res.ToolCalls = append(res.ToolCalls, tc)
				if k.send(reply) != nil {
					// A reply that cannot be encoded or sent: the call fails.
					k.send(map[string]any{"type": "tool_result", "id": m.ID, "error": "the tool's result could not be passed to the kernel"})
				}
				resetTimer(inactivity, h.cfg.Inactivity)
			case "done":
				k.awaitMarks(c.n, m.Marks)
				if m.Result != nil {
					k.mu.Lock()
					c.result.WriteString(*m.Result)
					k.mu.Unlock()
				}
				if m.Error != "" {
					k.mu.Lock()
					c.errText.WriteString(m.Error)
					k.mu.Unlock()
				}
				res.Stopped = m.Stop.valid()
				if m.OOM {
					res.Memory = "the cell ran out of memory"
					if k.limit > 0 {
						res.Memory = fmt.Sprintf("the cell reached the kernel's memory limit (%s)", sizeText(k.limit))
					}
				}
				return res, nil
			}
		case <-c.activity:
			if !interrupted {
				resetTimer(inactivity, h.cfg.Inactivity)
			}
		case <-capHit:
			capHit = nil
			interrupt(fmt.Sprintf("the cell printed over %s (the output cap)", sizeText(h.cfg.OutputCap)))
		case <-k.dead:
			h.died(lang, k, res)
			return res, nil
		case <-inactivity.C:
			interrupt(fmt.Sprintf("no output for %s (the inactivity budget)", h.cfg.Inactivity))
		case <-hard.C:
			cancel()
			interrupt(fmt.Sprintf("the cell ran for %s (the hard cap)", h.cfg.HardCap))
		case <-grace:
			// The cell did not end: the kernel goes, and its state with it.
			why := k.unanswered(c)
			k.stop()
			delete(h.kernels, lang)
			res.State = "lost: " + why + ", so it was stopped; the next cell starts a fresh one"
			h.lost[lang] = "the previous kernel was stopped: " + why
			return res, nil
		case <-cancelled:
			cancelled = nil
			interrupt("the call was cancelled")
		}
	}
}

// interruptGrace is how long a cell has to end after SIGINT.
const interruptGrace = 3 * time.Second

// unanswered says why an interrupted cell did not end, as far as can be
// known: whether the kernel took the interrupt, or ignores SIGINT.
func (k *kernel) unanswered(c *cellRun) string {
	k.mu.Lock()
	acked := c.acked
	k.mu.Unlock()
	switch {
	case acked:
		return "the cell caught the interrupt and kept running"
	case sigintIgnored(k.p.Pid()):
		return "the kernel ignores the interrupt (SIGINT is set to be ignored)"
	default:
		return fmt.Sprintf("the kernel did not answer the interrupt within %s (busy outside the interpreter, or blocked)", interruptGrace)
	}
}

func sigintIgnored(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(int(syscall.SIGINT)-1)) != 0
		}
	}
	return false
}

// begin makes cell n the running one; what ended cells printed since goes
// first, under a note.
func (k *kernel) begin(n int, dir string, outputCap int64) *cellRun {
	c := &cellRun{n: n, origin: n,
		out:    newCapture(spillPath(dir, n, "output"), outputCap),
		result: newCapture(spillPath(dir, n, "result"), 0), errText: newCapture(spillPath(dir, n, "error"), 0),
		ctl: make(chan message, 16), over: make(chan struct{}), activity: make(chan struct{}, 1), capHit: make(chan struct{})}
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.late; l.to > 0 {
		cells := fmt.Sprintf("cell %d", l.from)
		if l.to != l.from {
			cells = fmt.Sprintf("cells %d to %d", l.from, l.to)
		}
		c.out.WriteString(fmt.Sprintf("[printed after %s returned, by threads or processes left running:]\n", cells))
		c.out.WriteString(strings.TrimRight(string(l.text), "\n") + "\n")
		if l.dropped > 0 {
			c.out.WriteString(fmt.Sprintf("[… and %d bytes more, not kept]\n", l.dropped))
		}
		c.out.WriteString(fmt.Sprintf("[cell %d:]\n", n))
		k.late = lateOutput{}
	}
	k.last = n
	k.cur = c
	c.dropped = k.dropped
	return c
}

// end stops routing to c and moves what it collected into res.
func (k *kernel) end(c *cellRun, res *CellResult) {
	close(c.over)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cur == c {
		k.cur = nil
	}
	// Marks that never came (the cell redirected its output) are not
	// waited for again.
	k.synced = [2]int{max(k.synced[0], c.n), max(k.synced[1], c.n)}
	death := res.Error
	res.Output = c.out.text()
	res.Result = c.result.text()
	res.Error = c.errText.text()
	if death.Head != "" {
		res.Error.appendLine(death.Head)
	}
	res.Images = c.images
	res.ImageN = c.imagesN
	res.Dropped = k.dropped - c.dropped
}

// awaitMarks waits until what the cell's children printed before it
// returned has been read: each stream the driver marked (one that still
// held unread bytes when the cell ended) passed the cell's end mark;
// bounded, in case the kernel's output was taken away.
func (k *kernel) awaitMarks(n int, marked []int) {
	if len(marked) == 0 {
		return
	}
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	for {
		k.mu.Lock()
		ok := true
		for _, i := range marked {
			if i >= 0 && i < len(k.synced) && k.synced[i] < n {
				ok = false
			}
		}
		k.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-k.marks:
		case <-k.dead:
			return
		case <-deadline.C:
			return
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}

// died records that k is gone, with why, in res and for the next cell.
func (h *Host) died(lang string, k *kernel, res *CellResult) {
	<-k.dead
	why := "the kernel died (" + k.p.ExitStatus() + ")"
	if tail := k.stderrLast(); tail != "" {
		why += ": " + tail
	}
	if sig, ok := k.p.Signaled(); ok && k.limit > 0 && (sig == syscall.SIGSEGV || sig == syscall.SIGABRT || sig == syscall.SIGBUS) {
		why += fmt.Sprintf(" (it may have reached its memory limit, %s)", sizeText(k.limit))
	}
	res.Error.Head = why
	res.State = "lost: " + why + "; the next cell starts a fresh kernel"
	h.lost[lang] = why
	if h.kernels[lang] == k {
		delete(h.kernels, lang)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// sizeText says a byte count as people write limits: "64 MiB", "8 GiB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Spill writes text that is over the budget to a file under the host's
// folder and returns its path; kind names the text (output, result,
// error).
func (h *Host) Spill(cell int, kind, text string) (string, error) {
	h.mu.Lock()
	dir := h.tmp
	h.mu.Unlock()
	if dir == "" {
		return "", errors.New("no kernel folder")
	}
	p := spillPath(dir, cell, kind)
	return p, os.WriteFile(p, []byte(text), 0o600)
}
