// Package vibetool puts the worker roster (package vibe) on a run's tool
// surface: vibe_spawn, vibe_send, vibe_wait, vibe_kill and vibe_list, all
// read tier, and vibe_merge, write tier (it changes the root's branch and
// files, so plan and readonly mode do not have it). The gate belongs on
// the workers' own tools, so a worker gets the mode of the call that
// started it and the run's approval policy (VIBE_MODE, VIBE_APPROVE), a
// call outside normal mode starts only a worker whose command is
// configured for that mode, and such a worker runs in a worktree, never in
// the root. The tools exist only while vibe mode is on: with no backend
// configured the family attaches nothing, so the six tools are absent and
// refused by name.
package vibetool

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/vibe"
	"github.com/builtin-tools/builtin-tools/vibe/agentstream"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
	"github.com/mark3labs/mcp-go/mcp"
)

// Config turns vibe mode on and says what runs workers.
type Config struct {
	// On turns vibe mode on (serve --vibe).
	On bool
	// Commands are the command backend's lines by tier (fast, good) for
	// calls in normal mode, and by tier@mode (fast@plan, good@readonly)
	// for calls in plan and readonly mode: --worker-command fast='CMD'
	// fast@plan='CMD'. A call outside normal mode whose tier has no line
	// for its mode is refused.
	Commands map[string]string
	// Backends are a harness's own backends, keyed the same way; they win
	// over Commands.
	Backends map[string]runner.Backend
	// MaxRunning bounds the workers running at once (default 4).
	MaxRunning int
	// Timeout is a worker's time limit unless vibe_spawn gives one
	// (default 30 minutes).
	Timeout time.Duration
	// StateDir is where each root's workers are kept across processes (a
	// folder per root inside it): their records, results and worktrees.
	// Default: the user's cache folder, builtin-tools/vibe.
	StateDir string
}

// DefaultStateDir is the per-user folder of workers' state,
// ~/.cache/builtin-tools/vibe; "" when the system names no cache folder.
func DefaultStateDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "builtin-tools", "vibe")
}

// stateFolder is the root's own folder inside base: the same root always
// gets the same folder, so a new process finds what an earlier one left.
// Without a base it is a temporary folder this process's end removes.
func stateFolder(base, root string) (string, error) {
	if base == "" {
		base = DefaultStateDir()
	}
	if base == "" {
		return proc.TempDir("vibe-")
	}
	h := sha256.Sum256([]byte(root))
	dir := filepath.Join(base, hex.EncodeToString(h[:12]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("vibe: making the state folder: %w", err)
	}
	return dir, nil
}

// Roster is the run's roster and its state folder.
type Roster struct {
	*vibe.Roster
	state string
	run   *registry.Run
}

// Close stops the workers, and tells the run's peers what the state folder
// keeps and why (a log message: a Close has no result to carry it; the
// next run over the root says it again in its first answer).
func (r *Roster) Close() error {
	err := r.Roster.Close()
	if text := vibe.KeptText(r.Kept()); text != "" {
		r.run.Log(mcp.LoggingLevelNotice, "vibe", text)
	}
	return err
}

// Key is the roster's resource key.
var Key = registry.NewKey[*Roster]("vibe")

// Family is the six vibe_* tools.
var Family = registry.Family[*Roster]{
	Key: Key,
	Doc: "vibe_spawn, vibe_send, vibe_wait, vibe_kill, vibe_list, vibe_merge: background workers (only with --vibe)",
	Open: registry.Configured(Key, func(env *registry.Env, cfg Config) (*Roster, error) {
		if !cfg.On {
			return nil, registry.ErrSkip
		}
		backends := map[string]runner.Backend{}
		for key, line := range cfg.Commands {
			k, err := backendKey(key)
			if err != nil {
				return nil, err
			}
			backends[k] = runner.Command{Line: line}
		}
		for key, b := range cfg.Backends {
			k, err := backendKey(key)
			if err != nil {
				return nil, err
			}
			backends[k] = b
		}
		if len(backends) == 0 {
			return nil, fmt.Errorf("vibe mode is on but no tier has a worker command: give --worker-command fast='CMD' (and good='CMD', and fast@plan='CMD' for plan mode)")
		}
		state, err := stateFolder(cfg.StateDir, env.Root)
		if err != nil {
			return nil, err
		}
		run := env.Run
		r, err := vibe.New(vibe.Config{StateDir: state, Dir: env.Root, Backends: backends, MaxRunning: cfg.MaxRunning, Timeout: cfg.Timeout,
			Finished: func(in vibe.Info) {
				run.Log(mcp.LoggingLevelInfo, "vibe", fmt.Sprintf("worker %s (%s) ended: %s; vibe_wait or vibe_list has its result", in.ID, in.Label, in.Status))
			}})
		if err != nil {
			return nil, err
		}
		return &Roster{Roster: r, state: state, run: run}, nil
	}),
	Tools: []registry.Descriptor{SpawnTool, SendTool, WaitTool, KillTool, ListTool, MergeTool},
}

// backendKey checks a Commands or Backends key, TIER or TIER@MODE, and
// returns it as the roster takes it.
func backendKey(key string) (string, error) {
	tier, mode, hasMode := strings.Cut(strings.TrimSpace(key), "@")
	if !isTier(tier) {
		return "", fmt.Errorf("vibe: unknown tier %q in %q; the tiers are %s", tier, key, strings.Join(vibe.Tiers, ", "))
	}
	if !hasMode {
		return tier, nil
	}
	switch mode {
	case runner.ModeNormal, runner.ModePlan, runner.ModeReadOnly:
		return vibe.BackendKey(tier, mode), nil
	}
	return "", fmt.Errorf("vibe: unknown mode %q in %q; a worker command is for normal, plan or readonly mode (fast@plan='CMD')", mode, key)
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
	Operation string      `json:"operation" jsonschema:"what the answer is about: spawn, send, wait, kill, list or merge"`
	Worker    *vibe.Info  `json:"worker,omitempty"`
	Workers   []vibe.Info `json:"workers,omitempty" jsonschema:"vibe_list: every worker; vibe_wait: the finished ones"`
	Pending   []string    `json:"pending,omitempty" jsonschema:"vibe_wait: the ids still running or queued"`
	Running   []vibe.Info `json:"running,omitempty" jsonschema:"vibe_wait that timed out: the workers still running or queued, with their last activity and last lines of output"`
	Merge     *MergeInfo  `json:"merge,omitempty" jsonschema:"vibe_merge: what was brought into the root"`
	Restarted bool        `json:"restarted,omitempty" jsonschema:"vibe_send: the worker was running and was stopped first"`
	Unread    []string    `json:"unread" jsonschema:"finished workers whose results have not been read (vibe_wait reads them)"`
	text      string
}

// MergeInfo is what vibe_merge did.
type MergeInfo struct {
	Into     string   `json:"into" jsonschema:"the root's branch"`
	Strategy string   `json:"strategy" jsonschema:"fast-forward, merge or cherry-pick"`
	Commits  int      `json:"commits"`
	Head     string   `json:"head" jsonschema:"the root's branch's new commit"`
	Files    []string `json:"files,omitempty" jsonschema:"the files the merge changed in the root"`
	Removed  bool     `json:"removed" jsonschema:"the worktree and branch were removed"`
	KeptWhy  string   `json:"kept_why,omitempty"`
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

// describe writes one worker; full says whether its result is shown
// (else its first line), in at most room characters: a longer one is cut,
// and the line before it says where the whole result is.
func describe(b *strings.Builder, in vibe.Info, full bool, room int) {
	status := string(in.Status)
	if in.OverBudget {
		status += " (over budget)"
	}
	fmt.Fprintf(b, "%s %q [%s] %s, %s", in.ID, in.Label, in.Tier, status, elapsed(in))
	if in.Status == vibe.Running {
		fmt.Fprintf(b, ", last activity %s", ago(in.LastActivity))
	}
	// A running worker's last lines come last, whichever way the rest ends.
	defer func() {
		if in.Tail == "" {
			return
		}
		b.WriteString("  last output:\n")
		for _, l := range strings.Split(in.Tail, "\n") {
			b.WriteString("    " + l + "\n")
		}
	}()
	if in.ExitCode != nil && in.Status.Finished() {
		fmt.Fprintf(b, ", exit %d", *in.ExitCode)
	}
	if in.Runs > 1 {
		fmt.Fprintf(b, ", run %d", in.Runs)
	}
	if in.Mode != "" && in.Mode != runner.ModeNormal {
		fmt.Fprintf(b, ", started from %s mode", in.Mode)
	}
	fmt.Fprintf(b, "\n  backend: %s\n", in.Backend)
	if in.From != "" {
		fmt.Fprintf(b, "  from an earlier process: %s\n", in.From)
	}
	if in.Why != "" {
		fmt.Fprintf(b, "  why: %s\n", in.Why)
	}
	if in.Usage != nil {
		fmt.Fprintf(b, "  usage: %d tokens in", in.Usage.InputTokens)
		if in.Usage.CachedInputTokens > 0 {
			fmt.Fprintf(b, " (%d cached)", in.Usage.CachedInputTokens)
		}
		fmt.Fprintf(b, ", %d out", in.Usage.OutputTokens)
		if in.Usage.CostUSD > 0 {
			fmt.Fprintf(b, ", $%.4f", in.Usage.CostUSD)
		}
		if in.Usage.Model != "" {
			fmt.Fprintf(b, ", model %s", in.Usage.Model)
		}
		b.WriteString("\n")
	}
	if in.MaxCost > 0 || in.MaxTokens > 0 {
		var spent agentstream.Usage
		if in.Spent != nil {
			spent = *in.Spent
		}
		var parts []string
		if in.MaxTokens > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d tokens", spent.Tokens(), in.MaxTokens))
		}
		if in.MaxCost > 0 {
			if spent.CostUSD > 0 {
				parts = append(parts, fmt.Sprintf("$%.4f of $%g", spent.CostUSD, in.MaxCost))
			} else {
				parts = append(parts, fmt.Sprintf("no cost reported of $%g", in.MaxCost))
			}
		}
		fmt.Fprintf(b, "  budget used: %s\n", strings.Join(parts, "; "))
	} else if in.Spent != nil && in.Runs > 1 && in.Usage != nil && *in.Spent != *in.Usage {
		fmt.Fprintf(b, "  all runs: %d tokens in, %d out", in.Spent.InputTokens, in.Spent.OutputTokens)
		if in.Spent.CostUSD > 0 {
			fmt.Fprintf(b, ", $%.4f", in.Spent.CostUSD)
		}
		b.WriteString("\n")
	}
	if in.Session != nil {
		fmt.Fprintf(b, "  session: %s %s", in.Session.Backend, in.Session.ID)
		if in.Resumed {
			b.WriteString(" (this run resumed it)")
		}
		b.WriteString("\n")
	}
	if in.Branch != "" {
		where := "worktree " + in.Worktree
		if in.Worktree == "" {
			where = "its worktree is gone"
		}
		fmt.Fprintf(b, "  branch %s (%s): %d commits, %d files changed\n", in.Branch, where, in.Commits, len(in.FilesChanged))
		if in.Diffstat != "" && full {
			for _, l := range strings.Split(textcut.BytesEllipsis(in.Diffstat, 1500), "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	for _, n := range in.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	if in.Stderr != "" && full {
		tail := strings.TrimSpace(in.Stderr)
		if len(tail) > 1000 {
			cut := len(tail) - 1000
			for cut < len(tail) && !utf8.RuneStart(tail[cut]) {
				cut++
			}
			tail = "…" + tail[cut:]
		}
		fmt.Fprintf(b, "  stderr (last lines):\n    %s\n", strings.ReplaceAll(tail, "\n", "\n    "))
	}
	if in.Result == "" {
		return
	}
	res := in.Result
	if !full {
		if i := strings.IndexByte(res, '\n'); i >= 0 {
			res = res[:i] + " …"
		}
		fmt.Fprintf(b, "  result: %s\n", textcut.Ellipsis(res, 200))
		return
	}
	cut := utf8.RuneCountInString(res) > room
	if cut {
		res = textcut.Runes(res, max(room, 0))
	}
	switch {
	case (cut || in.Truncated) && in.ResultFile != "":
		fmt.Fprintf(b, "  result (its start; the whole result, %d bytes, is in %s):\n", in.ResultBytes, in.ResultFile)
	case in.Truncated:
		b.WriteString("  result (its start; no file holds the rest, see the notes):\n")
	case cut:
		b.WriteString("  result (its start; the structured content's result field has all of it):\n")
	default:
		b.WriteString("  result:\n")
	}
	for _, l := range strings.Split(res, "\n") {
		b.WriteString("    " + l + "\n")
	}
}

// resultRoom is how many characters of result each of n workers' answers
// may show within the call's output budget, after what else they say.
func resultRoom(c *registry.Call, n int) int {
	return max(c.Budget().Reserve(400).Split(n).Reserve(1500).Chars(), 200)
}

// gate is what a call passes on to the worker it starts: its mode and the
// run's approval policy.
func gate(c *registry.Call) runner.Gate {
	return runner.Gate{Mode: string(c.Mode), Approve: c.Policy().String()}
}

func (r *Roster) finish(res Result, b *strings.Builder) Result {
	for _, p := range r.Problems() {
		fmt.Fprintf(b, "state folder: %s\n", p)
	}
	// A worker this answer shows running that finished since is announced
	// by the next answer: the text must not say both.
	shown := map[string]bool{}
	for _, in := range res.Workers {
		if !in.Status.Finished() {
			shown[in.ID] = true
		}
	}
	res.Unread = []string{}
	for _, id := range r.Unread() {
		if !shown[id] {
			res.Unread = append(res.Unread, id)
		}
	}
	if len(res.Unread) > 0 {
		sort.Strings(res.Unread)
		fmt.Fprintf(b, "unread results: %s (vibe_wait with their ids shows them)\n", strings.Join(res.Unread, ", "))
	}
	res.text = strings.TrimRight(b.String(), "\n")
	return res
}
