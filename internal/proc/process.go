//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc/cgroup"
)

// Options say how [Start] wires a child and how [Process.Stop] ends it.
type Options struct {
	// Stdin is copied to the child's standard input, which is then closed.
	// With neither Stdin nor PipeStdin the child reads an empty input.
	Stdin io.Reader
	// PipeStdin makes [Process.Stdin] a writer to the child's input.
	PipeStdin bool
	// PipeStdout makes [Process.Stdout] the read end of the child's output,
	// for the caller to read to EOF. Otherwise the output is copied to
	// Stdout (nil discards it).
	PipeStdout bool
	Stdout     io.Writer
	// Stderr also receives the child's standard error, which [Process.Tail]
	// keeps in any case.
	Stderr io.Writer
	// TailStdout keeps standard output in the tail too (a program whose
	// output is only chatter, like a debug adapter on a socket).
	TailStdout bool
	// Files are the child's ends of pipes passed in cmd.ExtraFiles: closed
	// here once the child holds them (or the start failed).
	Files []*os.File
	// TailBytes is how much of standard error the tail keeps (default
	// 4 KiB); its first 2 KiB are kept too, where a program says why it
	// failed.
	TailBytes int
	// Signal is what Stop sends the group first (default SIGTERM).
	Signal syscall.Signal
	// Grace is how long Stop waits after Signal before SIGKILL (default 2 s).
	Grace time.Duration
	// Drain is how long output is still read after the child exited and
	// its group was killed (default 2 s); then the pipes are closed, so a
	// process that escaped the group cannot hold a reader forever.
	Drain time.Duration
	// Uncontained leaves the child in this process's cgroup, not one of its
	// own that ends with it: what the child started in cgroups of its own
	// then outlives it unless the child ends it. For a test of a program's
	// own cleanup after it is killed; its process group is still ended.
	Uncontained bool
}

// Process is a running child and everything this process knows of it.
// Its methods are safe for concurrent use.
type Process struct {
	cmd    *exec.Cmd
	pid    int
	tag    string
	cgroup string // its cgroup's folder; "" when the system gives none
	opts   Options

	stdin  *os.File // our end: PipeStdin, or the copy of Options.Stdin
	stdout *os.File // our end, PipeStdout
	tail   *Tail

	copiers sync.WaitGroup
	readers []*os.File // our read ends the copiers use

	exited  chan struct{}
	done    chan struct{}
	waitErr error
	stopped atomic.Bool
}

// Start starts cmd as a child this process owns: its own process group,
// the environment tag, a parent-death signal where the system has one,
// recorded with the reaper; its standard streams wired as o says. Do not
// set cmd's Stdin, Stdout or Stderr; do not call cmd.Wait.
func Start(cmd *exec.Cmd, o Options) (*Process, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("proc.Start: the standard streams are wired by Options")
	}
	if o.Signal == 0 {
		o.Signal = syscall.SIGTERM
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 2 * time.Second
	}
	if o.TailBytes <= 0 {
		o.TailBytes = 4 << 10
	}
	p := &Process{cmd: cmd, tag: newTag(), opts: o, tail: NewTail(o.TailBytes),
		exited: make(chan struct{}), done: make(chan struct{})}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(withoutTag(env), tagVar+"="+p.tag)

	var child []*os.File // ends the child gets, closed here after the start
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	fail := func(err error) (*Process, error) {
		closeAll(child...)
		closeAll(p.stdin, p.stdout)
		closeAll(p.readers...)
		closeAll(o.Files...)
		return nil, err
	}
	if o.PipeStdin || o.Stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		cmd.Stdin, p.stdin = r, w
		child = append(child, r)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	cmd.Stdout = outW
	child = append(child, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		return fail(err)
	}
	cmd.Stderr = errW
	child = append(child, errW)
	if o.PipeStdout {
		p.stdout = outR
	} else {
		p.readers = append(p.readers, outR)
	}
	p.readers = append(p.readers, errR)

	Cgroups.Setup() // outside spawnMu: it takes it to try a start
	spawnMu.Lock()
	p.cgroup, err = spawn(cmd, !o.Uncontained)
	if err == nil {
		p.pid = cmd.Process.Pid
		known.add(p.pid, p.tag)
	}
	spawnMu.Unlock()
	if err != nil {
		return fail(err)
	}
	closeAll(child...)
	closeAll(o.Files...)

	if o.Stdin != nil && !o.PipeStdin {
		go func(w *os.File) {
			io.Copy(w, o.Stdin) // a child that does not read it gets EPIPE'd
			w.Close()
		}(p.stdin)
		p.stdin = nil
	}
	if !o.PipeStdout {
		var out io.Writer = io.Discard
		if o.Stdout != nil {
			out = o.Stdout
		}
		if o.TailStdout {
			out = io.MultiWriter(out, p.tail)
		}
		p.copy(outR, out)
	}
	var errOut io.Writer = p.tail
	if o.Stderr != nil {
		errOut = io.MultiWriter(p.tail, o.Stderr)
	}
	p.copy(errR, errOut)
	go p.wait()
	return p, nil
}

func (p *Process) copy(r *os.File, w io.Writer) {
	p.copiers.Add(1)
	go func() {
		defer p.copiers.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
}

// wait reaps the child, ends what it left behind, then drains its output
// for at most Drain.
func (p *Process) wait() {
	err := p.cmd.Wait()
	p.waitErr = err
	killGroup(p.pid)
	endTagged(p.tag)
	cgroup.End(p.cgroup)
	reap.remove(p.pid)
	known.remove(p.pid)
	close(p.exited)
	readers := p.readers
	if p.stdout != nil {
		readers = append(readers, p.stdout)
	}
	t := time.AfterFunc(p.opts.Drain, func() {
		for _, r := range readers {
			r.Close()
		}
	})
	p.copiers.Wait()
	for _, r := range p.readers {
		r.Close()
	}
	if p.stdout == nil {
		t.Stop()
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
	close(p.done)
}

// Pid is the child's process id (and its group's).
func (p *Process) Pid() int { return p.pid }

// Stdin is the writer to the child's input (Options.PipeStdin), nil
// otherwise. Closing it gives the child EOF.
func (p *Process) Stdin() io.WriteCloser {
	if p.stdin == nil || !p.opts.PipeStdin {
		return nil
	}
	return p.stdin
}

// Stdout is the read end of the child's output (Options.PipeStdout), nil
// otherwise. It is closed Drain after the child exited.
func (p *Process) Stdout() io.ReadCloser {
	if p.stdout == nil {
		return nil
	}
	return p.stdout
}

// Exited is closed once the child has exited and its group was killed.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done is closed after Exited, once the output copied to Options.Stdout
// and Stderr and the tail is complete (bounded by Drain).
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until Done and returns how the child ended (an
// *exec.ExitError unless it exited 0).
func (p *Process) Wait() error {
	<-p.done
	return p.waitErr
}

// State is the child's exit state, nil while it runs.
func (p *Process) State() *os.ProcessState {
	if lifetime.Ended(p.exited) {
		return p.cmd.ProcessState
	}
	return nil
}

// ExitStatus says how the child ended: "exit status 3", "killed by signal
// killed"; "" while it runs.
func (p *Process) ExitStatus() string {
	st := p.State()
	if st == nil {
		return ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// Signaled reports whether the child died of a signal, and which.
func (p *Process) Signaled() (syscall.Signal, bool) {
	st := p.State()
	if st == nil {
		return 0, false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// StoppedByUs reports whether Stop or Kill was called: a signal death
// after it is ours, not the program's.
func (p *Process) StoppedByUs() bool { return p.stopped.Load() }

// Signal sends sig to the child alone (an interrupt), not its group.
func (p *Process) Signal(sig syscall.Signal) error {
	if lifetime.Ended(p.exited) {
		return os.ErrProcessDone
	}
	return p.cmd.Process.Signal(sig)
}

// Stop ends the child: Options.Signal to its group, SIGKILL after Grace
// (or at once when ctx ends), then waits for it to be reaped. It returns
// nil once the child is gone, or an error if it still runs after SIGKILL
// (a process stuck in the kernel).
func (p *Process) Stop(ctx context.Context) error {
	p.stopped.Store(true)
	if lifetime.Ended(p.exited) {
		return nil
	}
	syscall.Kill(-p.pid, p.opts.Signal)
	if lifetime.Await(ctx, p.exited, p.opts.Grace) {
		return nil
	}
	return p.Kill()
}

// Kill sends SIGKILL to the child's group and waits (at most 5 s) until
// the child is reaped.
func (p *Process) Kill() error {
	p.stopped.Store(true)
	killGroup(p.pid)
	if !lifetime.Await(context.Background(), p.exited, 5*time.Second) {
		return fmt.Errorf("process %d still runs 5 s after SIGKILL", p.pid)
	}
	return nil
}

// Tail is the end of what the child wrote to standard error (and to
// standard output with Options.TailStdout), trimmed, as valid UTF-8.
func (p *Process) Tail() *Tail { return p.tail }

// String names the process for messages: its program and pid.
func (p *Process) String() string {
	name := p.cmd.Path
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return fmt.Sprintf("%s (pid %d)", name, p.pid)
}

// known is every live child started here, by pid, with its tag.
var known = knownSet{m: map[int]string{}}

// spawnMu is held while a child is forked and recorded, so that a scan of
// this process's children (AdoptOrphans) never takes a child of ours for
// an orphan.
var spawnMu sync.Mutex

type knownSet struct {
	mu sync.Mutex
	m  map[int]string
}

func (k *knownSet) add(pid int, tag string) {
	k.mu.Lock()
	k.m[pid] = tag
	k.mu.Unlock()
}

func (k *knownSet) remove(pid int) {
	k.mu.Lock()
	delete(k.m, pid)
	k.mu.Unlock()
}

func (k *knownSet) has(pid int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[pid]
	return ok
}

// Children returns the process ids of every live child started here (and
// the reaper's): processes this one depends on, which a debugger must
// never stop.
func Children() []int {
	known.mu.Lock()
	defer known.mu.Unlock()
	return slices.Collect(maps.Keys(known.m))
}

// StartDetached starts cmd as a daemon that serves other processes after
// this one ends (the language-server broker): a session of its own, no
// parent-death signal, none of this process's tags, and known here, so
// that Shutdown does not kill it as an orphan. Standard streams are
// /dev/null. It is reaped if it exits while this process runs. What it
// starts is its own to end.
//
// Where children get cgroups, it also leaves the cgroups that this process
// and the builtin-tools processes that started it run in (each ends with
// its process, and would take the daemon along): it starts in the cgroup
// [cgroup.Children.Daemons] names, beside the outermost of them. That cgroup goes
// when empty: after the daemon if it ends while this process runs, at
// this process's Shutdown, or at the Shutdown of the last daemon in it.
func StartDetached(cmd *exec.Cmd) (int, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withoutTag(env)
	Cgroups.Setup() // outside spawnMu: it takes it to try a start
	dir, started := Cgroups.IntoDaemons(cmd.SysProcAttr)
	spawnMu.Lock()
	err := cmd.Start()
	if err == nil {
		known.add(cmd.Process.Pid, "")
	}
	spawnMu.Unlock()
	started()
	if err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	go func() {
		cmd.Wait()
		known.remove(pid)
		cgroup.RemoveDaemons(dir) // if it was the last daemon there
	}()
	return pid, nil
}
