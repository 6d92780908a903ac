package vibe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// Job is one run of a worker as a backend sees it.
type Job struct {
	ID, Label, Tier string
	Brief           string
	Dir             string // the folder the worker works in
	// Activity is called whenever the worker shows a sign of life (output).
	Activity func()
}

// Outcome is what a run gave.
type Outcome struct {
	Result   string // the final result; for a run cut short, the output so far
	Final    bool   // the backend saw a final result (not just output)
	ExitCode int
	Stderr   string // its last lines, bounded
	Usage    *Usage
	// Vanished is set when the process died of a signal nobody here sent.
	Vanished bool
}

// Usage is what a run cost, when the backend says.
type Usage struct {
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	Model        string  `json:"model,omitempty"`
}

// Backend runs workers of one tier. Run blocks until the run ends; when
// ctx ends it stops the run and returns what it had.
type Backend interface {
	// Describe says what runs a worker (the resolved command line).
	Describe() string
	// Check says whether the backend can run at all (a missing program).
	Check() error
	Run(ctx context.Context, j Job) (Outcome, error)
}

// Command runs a worker as a shell command line in the worker's folder:
// the brief on stdin, the result on stdout (plain text, or JSON lines
// whose "result" field is the result and whose usage fields are kept),
// stderr kept as a bounded log. The environment names the worker:
// VIBE_WORKER_ID, VIBE_WORKER_LABEL, VIBE_WORKER_TIER.
type Command struct {
	Line string
	// Grace is how long a stopped worker has between SIGTERM and SIGKILL
	// (default 2 s).
	Grace time.Duration
}

// Describe returns the command line.
func (c Command) Describe() string { return c.Line }

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

const stderrKeep = 4096

// Run starts the command and waits for it.
func (c Command) Run(ctx context.Context, j Job) (Outcome, error) {
	cmd := exec.Command("/bin/sh", "-c", c.Line)
	cmd.Dir = j.Dir
	cmd.Env = append(os.Environ(), "VIBE_WORKER_ID="+j.ID, "VIBE_WORKER_LABEL="+j.Label, "VIBE_WORKER_TIER="+j.Tier)
	cmd.Stdin = strings.NewReader(j.Brief)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Outcome{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Outcome{}, err
	}
	if err := proc.StartOld(cmd); err != nil {
		return Outcome{}, fmt.Errorf("starting %q: %w", c.Line, err)
	}
	pid := cmd.Process.Pid
	var (
		mu      sync.Mutex
		text    strings.Builder
		final   string
		isFinal bool
		usage   *Usage
		tail    []byte
	)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if j.Activity != nil {
				j.Activity()
			}
			mu.Lock()
			if r, u, ok := jsonResult(line); ok {
				if r != nil {
					final, isFinal = *r, true
				}
				if u != nil {
					usage = u
				}
			} else if text.Len() < 16<<20 {
				text.WriteString(line)
				text.WriteByte('\n')
			}
			mu.Unlock()
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 8192)
		for {
			n, err := stderr.Read(buf)
			if n > 0 {
				if j.Activity != nil {
					j.Activity()
				}
				mu.Lock()
				tail = append(tail, buf[:n]...)
				if len(tail) > stderrKeep {
					tail = tail[len(tail)-stderrKeep:]
				}
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	stopped := make(chan struct{})
	var stoppedByUs bool
	go func() {
		select {
		case <-ctx.Done():
			mu.Lock()
			stoppedByUs = true
			mu.Unlock()
			syscall.Kill(-pid, syscall.SIGTERM)
			grace := c.Grace
			if grace <= 0 {
				grace = 2 * time.Second
			}
			select {
			case <-stopped:
			case <-time.After(grace):
				proc.KillGroup(pid)
			}
		case <-stopped:
		}
	}()
	wg.Wait()
	werr := cmd.Wait()
	close(stopped)
	// Helpers the worker left in its group go with it.
	proc.KillGroup(pid)
	proc.Done(pid)
	mu.Lock()
	defer mu.Unlock()
	out := Outcome{Stderr: string(tail), Usage: usage, ExitCode: cmd.ProcessState.ExitCode()}
	if isFinal {
		out.Result, out.Final = final, true
	} else {
		out.Result = strings.TrimRight(text.String(), "\n")
		out.Final = werr == nil && strings.TrimSpace(out.Result) != ""
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && !stoppedByUs {
		out.Vanished = true
	}
	return out, nil
}

// jsonResult reads a JSON line: its "result" (when it is a string) and
// usage ("usage": {input_tokens, output_tokens}, "total_cost_usd" or
// "cost_usd", "model").
func jsonResult(line string) (*string, *Usage, bool) {
	t := bytes.TrimSpace([]byte(line))
	if len(t) == 0 || t[0] != '{' {
		return nil, nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil {
		return nil, nil, false
	}
	var res *string
	if raw, ok := m["result"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			res = &s
		}
	}
	var u Usage
	have := false
	if raw, ok := m["usage"]; ok && json.Unmarshal(raw, &u) == nil {
		have = true
	}
	for _, k := range []string{"total_cost_usd", "cost_usd"} {
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &u.CostUSD) == nil {
			have = true
		}
	}
	if raw, ok := m["model"]; ok && json.Unmarshal(raw, &u.Model) == nil {
		have = true
	}
	if res == nil && !have {
		return nil, nil, false
	}
	if !have {
		return res, nil, true
	}
	return res, &u, true
}
