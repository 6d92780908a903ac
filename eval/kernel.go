// Package eval runs persistent interpreter kernels for the eval tool: one
// Python kernel per run, started on first use, whose variables, imports and
// data persist across cells. The kernel is a small driver shipped in the
// binary (kernels/python.py) that talks to Go over two pipes of its own on
// fds 3 and 4, in framing's Content-Length frames, made close-on-exec inside
// the kernel so no child it starts can use them: no socket, no port, no
// secret, and the program's prints never mix with the protocol.
//
// A cell's clocks: an inactivity budget that output resets and that is
// paused while a tool() bridge call is pending, and a hard cap that never
// pauses. Either interrupts the cell (SIGINT, then the kernel's process
// group if that is ignored); every result says whether the kernel's state
// was preserved.
package eval

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/pyenv"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

//go:embed kernels/python.py
var pythonDriver []byte

//go:embed kernels/node.js
var nodeDriver []byte

// Languages eval runs.
var Languages = []string{"python", "javascript"}

// Config configures the kernels of a run.
type Config struct {
	// Python is the interpreter; default the checkout's .venv/bin/python or
	// venv/bin/python, else python3 on PATH. Node is node's (default node
	// on PATH).
	Python, Node string
	// Inactivity is how long a cell may go without output, bridge calls
	// not counted (default 5 minutes); HardCap bounds a cell however busy
	// (default 60 minutes).
	Inactivity, HardCap time.Duration
	// Environment, when the harness gives one, is where kernels run (EV-6);
	// without one they run on the host. eval never creates one.
	Environment Environment
}

// Environment is an isolated place a harness runs kernels in: a container,
// a sandbox. Prepare rewrites the kernel's command so that it starts there;
// it must keep cmd.ExtraFiles (the kernel's channel, fds 3 and 4) and the
// process group the command gets, so that ending the kernel ends what runs
// inside.
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
	return &Host{root: root, cfg: cfg, kernels: map[string]*kernel{}, lost: map[string]string{}}
}

// Close ends the kernels.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for lang, k := range h.kernels {
		k.kill()
		delete(h.kernels, lang)
	}
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
	return nil
}

type message struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Text   string          `json:"text,omitempty"`
	Mime   string          `json:"mime,omitempty"`
	Data   string          `json:"data,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result *string         `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	PID    int             `json:"pid,omitempty"`
}

type kernel struct {
	cmd    *exec.Cmd
	w      *framing.Writer
	toK    io.Closer
	msgs   chan message
	extra  chan message // what children write to the kernel's own stdout/stderr
	exited chan struct{}
	stderr *textcut.Tail
}

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
		tmp, err := os.MkdirTemp("", "builtin-tools-eval-")
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
	py := h.python()
	cmd := exec.Command(py, "-u", driver)
	if lang == "javascript" {
		py = h.cfg.Node
		if py == "" {
			py = "node"
		}
		cmd = exec.Command(py, driver)
	}
	cmd.Dir = h.root
	cmd.Env = append(os.Environ(), "MPLBACKEND=Agg", "PYTHONUNBUFFERED=1")
	cmd.ExtraFiles = []*os.File{inR, outW}
	if env := h.cfg.Environment; env != nil {
		if err := env.Prepare(cmd); err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, fmt.Errorf("the isolated environment could not take the kernel: %v", err)
		}
	}
	k := &kernel{cmd: cmd, w: framing.NewWriter(inW), toK: inW, msgs: make(chan message, 64),
		extra: make(chan message, 64), exited: make(chan struct{}), stderr: &textcut.Tail{}}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := proc.StartOld(cmd); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("starting the %s kernel (%s): %v", lang, py, err)
	}
	inR.Close()
	outW.Close()
	go k.children(stdout, "stdout", nil)
	go k.children(stderr, "stderr", k.stderr)
	go func() {
		r := framing.NewReader(outR)
		for {
			body, err := r.Read()
			if err != nil {
				break
			}
			var m message
			if json.Unmarshal(body, &m) == nil {
				k.msgs <- m
			}
		}
		outR.Close()
		cmd.Wait()
		// Children of cells go with the kernel, before the reaper forgets
		// the group.
		proc.KillGroup(cmd.Process.Pid)
		proc.Done(cmd.Process.Pid)
		close(k.exited)
		close(k.msgs)
	}()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case m, ok := <-k.msgs:
		if ok && m.Type == "ready" {
			return k, nil
		}
		k.kill()
		return nil, fmt.Errorf("the %s kernel (%s) did not start: %s", lang, py, k.stderr.String())
	case <-t.C:
		k.kill()
		return nil, fmt.Errorf("the %s kernel (%s) was not ready within 30 s: %s", lang, py, k.stderr.String())
	case <-ctx.Done():
		k.kill()
		return nil, context.Cause(ctx)
	}
}

// children forwards what processes the cell starts write to the kernel's
// real stdout and stderr (the driver's own prints go over the channel).
func (k *kernel) children(r io.Reader, name string, keep io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if keep != nil {
				keep.Write(buf[:n])
			}
			select {
			case k.extra <- message{Type: "stream", Name: name, Text: string(buf[:n])}:
			default: // nobody is reading: a child of an old cell
			}
		}
		if err != nil {
			return
		}
	}
}

func (k *kernel) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return k.w.Write(b)
}

func (k *kernel) kill() {
	k.toK.Close()
	if k.cmd.Process != nil {
		proc.KillGroup(k.cmd.Process.Pid)
	}
	select {
	case <-k.exited:
	case <-time.After(5 * time.Second):
	}
}

func (k *kernel) exitStatus() string {
	if st := k.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit status %d", st.ExitCode())
	}
	return "it stopped answering"
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
	Cell int `json:"cell"`
	// Output is stdout and stderr in order, with displays in place.
	Output string `json:"output,omitempty"`
	// Result is the last expression's repr, when it has one.
	Result string `json:"result,omitempty"`
	// Error is the exception as a short traceback, lines the cell's own.
	Error     string     `json:"error,omitempty"`
	Images    [][]byte   `json:"-"`
	ImageN    int        `json:"images,omitempty" jsonschema:"figures returned as image content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// State is preserved, or lost with why.
	State string `json:"kernel_state"`
	// Interrupted says which clock stopped the cell.
	Interrupted string `json:"interrupted,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
}

// Run runs one cell in lang's kernel ("" is python). reset discards the
// kernel first.
func (h *Host) Run(ctx context.Context, lang, code string, reset bool, bridge Bridge) (*CellResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("the run is closed")
	}
	if lang == "" {
		lang = "python"
	}
	state := "preserved"
	if why := h.lost[lang]; why != "" {
		state = "lost: " + why
		delete(h.lost, lang)
	}
	if k := h.kernels[lang]; reset && k != nil {
		k.kill()
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
	defer func() { res.DurationMS = time.Since(t0).Milliseconds() }()
	if err := k.send(map[string]any{"type": "execute", "code": code, "cell": h.cells}); err != nil {
		h.died(lang, k, res)
		return res, nil
	}
	var out strings.Builder
	inactivity := time.NewTimer(h.cfg.Inactivity)
	defer inactivity.Stop()
	hard := time.NewTimer(h.cfg.HardCap)
	defer hard.Stop()
	hardCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := false
	var grace <-chan time.Time
	interrupt := func(why string) {
		if interrupted {
			return
		}
		interrupted = true
		res.Interrupted = why
		k.cmd.Process.Signal(syscall.SIGINT)
		grace = time.After(3 * time.Second)
	}
	for {
		select {
		case m, ok := <-k.msgs:
			if !ok {
				res.Output = out.String()
				h.died(lang, k, res)
				return res, nil
			}
			switch m.Type {
			case "stream":
				out.WriteString(m.Text)
				resetTimer(inactivity, h.cfg.Inactivity)
			case "display":
				out.WriteString(m.Text + "\n")
				resetTimer(inactivity, h.cfg.Inactivity)
			case "image":
				if png, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
					res.Images = append(res.Images, png)
					res.ImageN++
				}
			case "tool_call":
				// The inactivity budget pauses while the bridge works.
				inactivity.Stop()
				tc := ToolCall{Name: m.Name}
				start := time.Now()
				data, err := bridge(hardCtx, m.Name, m.Args)
				tc.MS = time.Since(start).Milliseconds()
				reply := map[string]any{"type": "tool_result"}
				if err != nil {
					tc.Error = err.Error()
					reply["error"] = err.Error()
				} else {
					tc.OK = true
					reply["result"] = data
				}
				res.ToolCalls = append(res.ToolCalls, tc)
				k.send(reply)
				resetTimer(inactivity, h.cfg.Inactivity)
			case "done":
				res.Output = out.String()
				if m.Result != nil {
					res.Result = *m.Result
				}
				res.Error = m.Error
				return res, nil
			}
		case m := <-k.extra:
			out.WriteString(m.Text)
			resetTimer(inactivity, h.cfg.Inactivity)
		case <-inactivity.C:
			interrupt(fmt.Sprintf("no output for %s (the inactivity budget)", h.cfg.Inactivity))
		case <-hard.C:
			cancel()
			interrupt(fmt.Sprintf("the cell ran for %s (the hard cap)", h.cfg.HardCap))
		case <-grace:
			// SIGINT was ignored: the kernel goes, and its state with it.
			k.kill()
			delete(h.kernels, lang)
			res.Output = out.String()
			res.State = "lost: the kernel ignored the interrupt and was stopped; the next cell starts a fresh one"
			h.lost[lang] = "the previous kernel was stopped after an interrupt it ignored"
			return res, nil
		case <-ctx.Done():
			interrupt("the call was cancelled")
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

func (h *Host) died(lang string, k *kernel, res *CellResult) {
	<-k.exited
	// What the cell started dies with the kernel: the group outlives its
	// leader while members remain.
	proc.KillGroup(k.cmd.Process.Pid)
	why := "the kernel died (" + k.exitStatus() + ")"
	if tail := k.stderr.String(); tail != "" {
		why += ": " + lastLine(tail)
	}
	res.Error = strings.TrimSpace(res.Error + "\n" + why)
	res.State = "lost: " + why + "; the next cell starts a fresh kernel"
	h.lost[lang] = why
	delete(h.kernels, lang)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Spill writes text that is over the budget to a file under the host's
// folder and returns its path.
func (h *Host) Spill(cell int, text string) (string, error) {
	h.mu.Lock()
	dir := h.tmp
	h.mu.Unlock()
	if dir == "" {
		return "", errors.New("no kernel folder")
	}
	p := filepath.Join(dir, fmt.Sprintf("cell-%d-output.txt", cell))
	return p, os.WriteFile(p, []byte(text), 0o600)
}
