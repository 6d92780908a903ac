// Package runner is what runs one run of a vibe worker: the Backend a
// roster hands a Job and gets an Outcome from, the gate the worker's own
// tools must keep (the mode of the call that started it and the run's
// approval policy), and Command, the backend that runs a shell line as a
// child owned by internal/proc, the brief on its stdin and its stdout read
// by package vibe/agentstream. It knows nothing of rosters, records or
// state folders.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/vibe/agentstream"
)

// Modes a worker may be started from.
const (
	ModeNormal   = "normal"
	ModePlan     = "plan"
	ModeReadOnly = "readonly"
)

// Gate is what the caller may do, passed on to the worker it starts: the
// mode of the call (normal, plan, readonly; "" is normal) and the run's
// approval policy ("write=allow,exec=deny").
type Gate struct {
	Mode, Approve string
}

// CallMode is the mode of the call, normal for "".
func (g Gate) CallMode() string {
	if g.Mode == "" {
		return ModeNormal
	}
	return g.Mode
}

// Job is one run of a worker as a backend sees it.
type Job struct {
	ID, Label, Tier string
	Brief           string
	Dir             string // the folder the worker works in
	// Mode is the mode of the call that started this run (normal, plan,
	// readonly) and Approve the run's approval policy as ParsePolicy reads
	// it ("write=allow,exec=deny"). The vibe tools are read tier, so the
	// gate is the worker's: its own tools must run in this mode under this
	// policy.
	Mode, Approve string
	// Output, when set, receives the worker's output as it arrives (the
	// roster streams it to the result file). A backend writes there rather
	// than returning the output in Outcome.Result.
	Output io.Writer
	// Log, when set, receives the worker's error output as it arrives
	// (with Output, the roster's tail of a running worker).
	Log io.Writer
	// Activity is called whenever the worker shows a sign of life (output).
	Activity func()
	// Usage, if set, is told the run's usage so far whenever the backend
	// reports more (the roster's budget).
	Usage func(agentstream.Usage)
	// Resume, when set, is the session this run resumes: Brief is then
	// only the new message.
	Resume *agentstream.Session
}

// Outcome is what a run gave.
type Outcome struct {
	// Result is the final result; a backend that does not write
	// Job.Output puts there the output of a run cut short.
	Result   string
	Final    bool // the backend saw a final result (not just output)
	ExitCode int
	Stderr   string // its last lines, bounded
	Usage    *agentstream.Usage
	// Vanished is set when the process died of a signal nobody here sent.
	Vanished bool
	// Notes say what of the output was not read as it was meant (a JSON
	// record too long to parse) or not kept.
	Notes []string
	// Session is the agent CLI's session the run reported (to resume).
	Session *agentstream.Session
	// Errors are what the agent CLI reported as failures: with one, the
	// run failed even if it exited 0.
	Errors []string
}

// Backend runs workers of one tier in one mode. Run blocks until the run
// ends; when ctx ends it stops the run and returns what it had.
type Backend interface {
	// Describe says what runs a worker (the command line). A backend
	// whose line depends on the caller's gate may also have a method
	// DescribeAs(Gate) string, which answers then show.
	Describe() string
	// Check says whether the backend can run at all (a missing program).
	Check() error
	Run(ctx context.Context, j Job) (Outcome, error)
}

// Command runs a worker as a shell command line in the worker's folder:
// the brief on stdin, the result on stdout (plain text; JSON lines whose
// "result" field is the result and whose usage fields are kept, when its
// first line is one; or the stream of an agent CLI the line names, see
// package vibe/agentstream), stderr kept as a bounded log. The environment
// names the worker and the gate its tools must keep: VIBE_WORKER_ID,
// VIBE_WORKER_LABEL, VIBE_WORKER_TIER, VIBE_MODE and VIBE_APPROVE; {mode}
// and {approve} in the line are replaced by the same values.
type Command struct {
	Line string
	// Grace is how long a stopped worker has between SIGTERM and SIGKILL
	// (default 2 s).
	Grace time.Duration
}

// Describe returns the command line.
func (c Command) Describe() string { return c.Line }

// DescribeAs returns the command line a run with gate g runs.
func (c Command) DescribeAs(g Gate) string {
	if l, err := c.line(Job{Mode: g.CallMode(), Approve: g.Approve}); err == nil {
		return l
	}
	return c.Line
}

// Check resolves the command's program on PATH.
func (c Command) Check() error {
	f := strings.Fields(c.Line)
	if len(f) == 0 {
		return errors.New("the worker command is empty")
	}
	prog := f[0]
	for strings.Contains(prog, "=") && len(f) > 1 { // VAR=value cmd
		f = f[1:]
		prog = f[0]
	}
	if _, err := exec.LookPath(prog); err != nil {
		return fmt.Errorf("the worker command's program %q is not found (%v); give the whole path or install it", prog, err)
	}
	return nil
}

// line is the command line with {mode} and {approve} replaced. They come
// from closed sets; anything else is refused rather than put in a shell
// line.
func (c Command) line(j Job) (string, error) {
	for k, v := range map[string]string{"{mode}": j.Mode, "{approve}": j.Approve} {
		if strings.Contains(c.Line, k) && strings.Trim(v, "abcdefghijklmnopqrstuvwxyz=,") != "" {
			return "", fmt.Errorf("the worker command has %s, and %q cannot be put in a command line", k, v)
		}
	}
	return strings.NewReplacer("{mode}", j.Mode, "{approve}", j.Approve).Replace(c.Line), nil
}

// Resumes says whether a run of this line can resume s: claude's line
// gets --resume ID at its end, codex's (a line with the word exec) gets
// resume ID after its options.
func (c Command) Resumes(s agentstream.Session) bool {
	_, ok := agentstream.ResumeLine(c.Line, s)
	return ok
}

// MemoryMax bounds the output kept in memory when a job has no Output
// (and a roster's when its state folder cannot be written).
const MemoryMax = 16 << 20

// Run starts the command and waits for it: for the shell, not for its
// output. When the shell exits its process group and every process that
// carries its environment tag (a helper that called setsid) are killed,
// and its output is read for at most proc's drain time after that, so a
// background child that holds stdout neither keeps the worker running nor
// blocks a stop.
func (c Command) Run(ctx context.Context, j Job) (Outcome, error) {
	mode := j.Mode
	if mode == "" {
		mode = ModeNormal
	}
	j.Mode = mode
	line, err := c.line(j)
	if err != nil {
		return Outcome{}, err
	}
	if j.Resume != nil {
		l, ok := agentstream.ResumeLine(line, *j.Resume)
		if !ok {
			return Outcome{}, fmt.Errorf("the worker command cannot resume %s session %q", j.Resume.Backend, j.Resume.ID)
		}
		line = l
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = j.Dir
	cmd.Env = append(os.Environ(), "VIBE_WORKER_ID="+j.ID, "VIBE_WORKER_LABEL="+j.Label, "VIBE_WORKER_TIER="+j.Tier,
		"VIBE_MODE="+mode, "VIBE_APPROVE="+j.Approve)
	grace := c.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	var mem *memOutput
	out := j.Output
	if out == nil {
		mem = &memOutput{}
		out = mem
	}
	p, err := proc.Start(cmd, proc.Options{
		Stdin:      strings.NewReader(j.Brief),
		PipeStdout: true,
		Stderr:     stderrWriter(j),
		Signal:     syscall.SIGTERM,
		Grace:      grace,
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("starting %q: %w", line, err)
	}
	read := make(chan agentstream.Stdout, 1)
	go func() { read <- agentstream.Read(p.Stdout(), out, agentstream.StreamsOf(line), j.Activity, j.Usage) }()
	select {
	case <-p.Exited():
	case <-ctx.Done():
		p.Stop(context.Background())
	}
	res := <-read // proc closes stdout a drain time after the exit
	werr := p.Wait()
	o := Outcome{Stderr: p.Tail().String(), Usage: res.Usage, Notes: res.Notes, ExitCode: -1, Session: res.Session, Errors: res.Errors}
	if st := p.State(); st != nil {
		o.ExitCode = st.ExitCode()
	}
	if res.Final != nil {
		o.Result, o.Final = *res.Final, true
	} else {
		o.Final = werr == nil && res.Text && !res.Agent
		if mem != nil {
			o.Result = strings.TrimRight(mem.b.String(), "\n")
			if mem.dropped > 0 {
				o.Notes = append(o.Notes, fmt.Sprintf("%d bytes of output past the first %d MiB were not kept", mem.dropped, MemoryMax>>20))
			}
		}
	}
	if _, sig := p.Signaled(); sig && !p.StoppedByUs() {
		o.Vanished = true
	}
	return o, nil
}

// memOutput keeps a run's output in memory, up to MemoryMax.
type memOutput struct {
	b       bytes.Buffer
	dropped int64
}

func (m *memOutput) Write(p []byte) (int, error) {
	room := MemoryMax - m.b.Len()
	if room < len(p) {
		m.dropped += int64(len(p) - max(room, 0))
		p = p[:max(room, 0)]
	}
	m.b.Write(p)
	return len(p), nil
}

// stderrWriter is where a job's error output goes: its Log, and a sign of
// life.
func stderrWriter(j Job) io.Writer {
	if j.Log == nil {
		return activityWriter(j.Activity)
	}
	return io.MultiWriter(activityWriter(j.Activity), j.Log)
}

// activityWriter calls f for every write (stderr output is a sign of life).
type activityWriter func()

func (f activityWriter) Write(p []byte) (int, error) {
	if f != nil && len(p) > 0 {
		f()
	}
	return len(p), nil
}
