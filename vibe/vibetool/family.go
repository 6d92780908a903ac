// Package vibetool puts the worker roster (package vibe) on a run's tool
// surface: vibe_spawn, vibe_send, vibe_wait, vibe_kill and vibe_list, all
// read tier (the gate belongs on the workers' own tools). They exist only
// while vibe mode is on: with no backend configured the family attaches
// nothing, so the five tools are absent and refused by name.
package vibetool

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/vibe"
	"github.com/mark3labs/mcp-go/mcp"
)

// Config turns vibe mode on and says what runs workers.
type Config struct {
	// On turns vibe mode on (serve --vibe).
	On bool
	// Commands are the command backend's lines per tier (fast, good):
	// --worker-command fast='CMD'.
	Commands map[string]string
	// Backends are a harness's own backends per tier; they win over
	// Commands.
	Backends map[string]vibe.Backend
	// MaxRunning bounds the workers running at once (default 4).
	MaxRunning int
	// Timeout is a worker's time limit unless vibe_spawn gives one
	// (default 30 minutes).
	Timeout time.Duration
}

// Roster is the run's roster and its state folder.
type Roster struct {
	*vibe.Roster
	state string
}

// Close stops every worker, then drops the journal; worktrees that hold
// work are kept.
func (r *Roster) Close() error {
	err := r.Roster.Close()
	os.Remove(filepath.Join(r.state, "events.jsonl"))
	if names, _ := filepath.Glob(filepath.Join(r.state, "*.result.txt")); len(names) > 0 {
		for _, n := range names {
			os.Remove(n)
		}
	}
	os.Remove(filepath.Join(r.state, "worktrees")) // only when empty
	os.Remove(r.state)
	return err
}

// Key is the roster's resource key.
var Key = registry.NewKey[*Roster]("vibe")

// Family is the five vibe_* tools.
var Family = registry.Family[*Roster]{
	Key: Key,
	Doc: "vibe_spawn, vibe_send, vibe_wait, vibe_kill, vibe_list: background workers (only with --vibe)",
	Open: func(env *registry.Env) (*Roster, error) {
		cfg, err := registry.Setting[Config](env, Key.Name())
		if err != nil {
			return nil, err
		}
		if !cfg.On {
			return nil, registry.ErrSkip
		}
		backends := map[string]vibe.Backend{}
		for tier, line := range cfg.Commands {
			backends[tier] = vibe.Command{Line: line}
		}
		for tier, b := range cfg.Backends {
			backends[tier] = b
		}
		for tier := range backends {
			if !isTier(tier) {
				return nil, fmt.Errorf("vibe: unknown tier %q; the tiers are %s", tier, strings.Join(vibe.Tiers, ", "))
			}
		}
		if len(backends) == 0 {
			return nil, fmt.Errorf("vibe mode is on but no tier has a worker command: give --worker-command fast='CMD' (and good='CMD')")
		}
		state, err := os.MkdirTemp("", "builtin-tools-vibe-")
		if err != nil {
			return nil, err
		}
		run := env.Run
		r, err := vibe.New(vibe.Config{StateDir: state, Dir: env.Root, Backends: backends, MaxRunning: cfg.MaxRunning, Timeout: cfg.Timeout,
			Finished: func(in vibe.Info) {
				run.Log(mcp.LoggingLevelInfo, "vibe", fmt.Sprintf("worker %s (%s) ended: %s; vibe_wait or vibe_list has its result", in.ID, in.Label, in.Status))
			}})
		if err != nil {
			os.RemoveAll(state)
			return nil, err
		}
		return &Roster{Roster: r, state: state}, nil
	},
	Tools: []registry.Descriptor{SpawnTool, SendTool, WaitTool, KillTool, ListTool},
}

func isTier(t string) bool {
	for _, x := range vibe.Tiers {
		if x == t {
			return true
		}
	}
	return false
}

// Result is every vibe_* answer: what it was about, and the finished
// workers whose results no answer has carried yet.
type Result struct {
	Op        string      `json:"op"`
	Worker    *vibe.Info  `json:"worker,omitempty"`
	Workers   []vibe.Info `json:"workers,omitempty" jsonschema:"vibe_list: every worker; vibe_wait: the finished ones"`
	Pending   []string    `json:"pending,omitempty" jsonschema:"vibe_wait: the ids still running or queued"`
	Restarted bool        `json:"restarted,omitempty" jsonschema:"vibe_send: the worker was running and was stopped first"`
	Unread    []string    `json:"unread" jsonschema:"finished workers whose results have not been read (vibe_wait reads them)"`
	text      string
}

// Text is what the agent reads.
func (r Result) Text() string { return r.text }

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(100*time.Millisecond).String() + " ago"
}

func elapsed(in vibe.Info) string {
	switch {
	case in.Started.IsZero():
		return "not started"
	case in.Ended.IsZero():
		return time.Since(in.Started).Round(100 * time.Millisecond).String()
	}
	return in.Ended.Sub(in.Started).Round(100 * time.Millisecond).String()
}

// describe writes one worker; full says whether its whole result is
// shown (else its first line).
func describe(b *strings.Builder, in vibe.Info, full bool) {
	fmt.Fprintf(b, "%s %q [%s] %s, %s", in.ID, in.Label, in.Tier, in.Status, elapsed(in))
	if in.Status == vibe.Running {
		fmt.Fprintf(b, ", last activity %s", ago(in.LastActivity))
	}
	if in.ExitCode != nil && in.Status.Finished() {
		fmt.Fprintf(b, ", exit %d", *in.ExitCode)
	}
	if in.Runs > 1 {
		fmt.Fprintf(b, ", run %d", in.Runs)
	}
	fmt.Fprintf(b, "\n  backend: %s\n", in.Backend)
	if in.Why != "" {
		fmt.Fprintf(b, "  why: %s\n", in.Why)
	}
	if in.Usage != nil {
		fmt.Fprintf(b, "  usage: %d tokens in, %d out", in.Usage.InputTokens, in.Usage.OutputTokens)
		if in.Usage.CostUSD > 0 {
			fmt.Fprintf(b, ", $%.4f", in.Usage.CostUSD)
		}
		if in.Usage.Model != "" {
			fmt.Fprintf(b, ", model %s", in.Usage.Model)
		}
		b.WriteString("\n")
	}
	if in.Branch != "" {
		fmt.Fprintf(b, "  branch %s (worktree %s): %d commits, %d files changed\n", in.Branch, in.Worktree, in.Commits, len(in.FilesChanged))
		if in.Diffstat != "" && full {
			for _, l := range strings.Split(in.Diffstat, "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	if in.Result != "" {
		res := in.Result
		if !full {
			if i := strings.IndexByte(res, '\n'); i >= 0 {
				res = res[:i] + " …"
			}
			if len(res) > 200 {
				res = res[:200] + " …"
			}
			fmt.Fprintf(b, "  result: %s\n", res)
		} else {
			b.WriteString("  result:\n")
			for _, l := range strings.Split(res, "\n") {
				b.WriteString("    " + l + "\n")
			}
			if in.Truncated {
				fmt.Fprintf(b, "  (cut; the whole result is in %s)\n", in.ResultFile)
			}
		}
	}
	if in.Stderr != "" && full {
		tail := strings.TrimSpace(in.Stderr)
		if len(tail) > 1000 {
			tail = "…" + tail[len(tail)-1000:]
		}
		fmt.Fprintf(b, "  stderr (last lines):\n    %s\n", strings.ReplaceAll(tail, "\n", "\n    "))
	}
}

func (r *Roster) finish(res Result, b *strings.Builder) Result {
	res.Unread = r.Unread()
	if res.Unread == nil {
		res.Unread = []string{}
	}
	if len(res.Unread) > 0 {
		sort.Strings(res.Unread)
		fmt.Fprintf(b, "unread results: %s (vibe_wait with their ids shows them)\n", strings.Join(res.Unread, ", "))
	}
	res.text = strings.TrimRight(b.String(), "\n")
	return res
}
