package vibetool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
)

type spawnParams struct {
	Brief          string  `json:"brief" jsonschema:"the whole task: the worker sees nothing else"`
	Label          string  `json:"label" jsonschema:"a short name for the worker (used in its branch name)"`
	Tier           string  `json:"tier,omitempty" jsonschema:"fast (well-specified mechanical work, the default) or good (design, judgement, reviewing a fast worker)" enum:"fast,good"`
	TimeoutSeconds int     `json:"timeout_seconds,omitempty" jsonschema:"its time limit (default 30 minutes); at the limit it ends as timed_out with its output so far"`
	Isolation      string  `json:"isolation,omitempty" jsonschema:"worktree: run in a git worktree of its own, at the root's HEAD, on a branch vibe/<label>-<id>-<suffix>; none: in the root. Default none in normal mode; from plan and readonly mode a worker always runs in a worktree" enum:"none,worktree"`
	MaxCost        float64 `json:"max_cost,omitempty" jsonschema:"a budget in US dollars over all its runs, from the cost its backend reports (claude does, with its result); past it the worker is stopped and fails"`
	MaxTokens      int     `json:"max_tokens,omitempty" jsonschema:"a budget in tokens over all its runs (every input token, cached ones too, and every output token), from the usage its backend reports as it goes; past it the worker is stopped and fails"`
	CarryChanges   bool    `json:"carry_changes,omitempty" jsonschema:"isolation worktree: bring the checkout's uncommitted changes of tracked files into the worktree (untracked files are never carried); without it the worktree has only what is committed"`
}

// SpawnTool is vibe_spawn (VB-1).
var SpawnTool = registry.Descriptor{
	Name:  "vibe_spawn",
	Title: "start a background worker",
	Tier:  tiers.Read,
	Description: "Start a background worker on a task and return at once with its id (w1, w2, …). At most a few run at once; more wait queued. " +
		"Its result is kept whether or not anyone waits, even past a restart of this server: vibe_wait blocks until it ends (never poll), and every vibe_* answer lists unread results. " +
		"The worker runs in the mode of this call under the run's approval policy: from plan or readonly mode only a worker command configured for that mode starts, in a worktree of its own.",
	Handler: registry.With(Key, spawn),
}

func spawn(ctx context.Context, c *registry.Call, r *Roster, p spawnParams) (Result, error) {
	g := gate(c)
	worktree := false
	switch p.Isolation {
	case "worktree":
		worktree = true
	case "":
		worktree = c.Mode != tiers.Normal
	case "none":
	default:
		return Result{}, fmt.Errorf("isolation %q: use worktree or none", p.Isolation)
	}
	in, err := r.Spawn(vibe.SpawnRequest{Brief: p.Brief, Label: p.Label, Tier: p.Tier, Timeout: time.Duration(p.TimeoutSeconds) * time.Second,
		Worktree: worktree, CarryChanges: p.CarryChanges, Gate: g, MaxCost: p.MaxCost, MaxTokens: p.MaxTokens})
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "started %s %q [%s] (%s", in.ID, in.Label, in.Tier, in.Status)
	if in.Mode != runner.ModeNormal {
		fmt.Fprintf(&b, ", in %s mode", in.Mode)
	}
	fmt.Fprintf(&b, "); backend: %s\n", in.Backend)
	if worktree {
		changed, untracked := r.UncommittedCounts(in.ID)
		fmt.Fprintf(&b, "It works in a git worktree of its own at the root's HEAD (%s), not in the root.", short(in.BaseCommit))
		switch {
		case in.Carried:
			fmt.Fprintf(&b, " Carried into it: the uncommitted changes of %s (%s).", textcut.Count(changed, "file", "files"), names(in.Uncommitted, changed))
		case changed > 0:
			fmt.Fprintf(&b, " Not in it: the uncommitted changes of %s of the checkout (%s); carry_changes: true brings them.", textcut.Count(changed, "file", "files"), names(in.Uncommitted, changed))
		}
		if untracked > 0 {
			fmt.Fprintf(&b, " Not in it either: %s untracked in the checkout (%s).", textcut.Count(untracked, "path", "paths"), names(in.Untracked, untracked))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "vibe_wait with worker_ids [%q] returns its result when it ends.\n", in.ID)
	return r.finish(Result{Operation: "spawn", Worker: &in}, &b), nil
}

func short(commit string) string { return commit[:min(len(commit), 12)] }

// names lists up to 10 file names, saying how many more there are.
func names(list []string, total int) string {
	shown := list[:min(len(list), 10)]
	out := strings.Join(shown, ", ")
	if total > len(shown) {
		out += fmt.Sprintf(" and %d more", total-len(shown))
	}
	return out
}

type sendParams struct {
	WorkerID string `json:"worker_id"`
	Message  string `json:"message" jsonschema:"added to the worker's brief; the worker runs again with it"`
}

// SendTool is vibe_send.
var SendTool = registry.Descriptor{
	Name:        "vibe_send",
	Title:       "send a worker more instructions",
	Tier:        tiers.Read,
	Description: "Add a message to a worker's brief and run it again, in the mode of this call: a worker whose agent CLI reported a session (claude, codex) resumes it with only the message; any other runs again with the whole brief. A running worker is stopped first. The answer says which it did.",
	Handler:     registry.With(Key, send),
}

func send(ctx context.Context, c *registry.Call, r *Roster, p sendParams) (Result, error) {
	in, restarted, err := r.SendAs(gate(c), p.WorkerID, p.Message)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	how := "started again with the whole brief and the message added"
	if in.Resumed {
		how = fmt.Sprintf("resumed its %s session %s with only the message", in.Session.Backend, in.Session.ID)
	}
	if restarted {
		fmt.Fprintf(&b, "%s was running: it was stopped and %s (run %d).\n", in.ID, how, in.Runs)
	} else {
		fmt.Fprintf(&b, "%s %s (run %d).\n", in.ID, how, in.Runs)
	}
	if in.Resumed {
		b.WriteString("The brief was not sent again: the session has it.\n")
	}
	return r.finish(Result{Operation: "send", Worker: &in, Restarted: restarted}, &b), nil
}

type waitParams struct {
	WorkerIDs      []string `json:"worker_ids,omitempty" jsonschema:"the workers to wait for (default: every worker still running or queued, and finished ones whose result was not read yet; or those of label)"`
	WorkerID       string   `json:"worker_id,omitempty" jsonschema:"one worker to wait for (the same as worker_ids with one id)"`
	Label          string   `json:"label,omitempty"`
	Mode           string   `json:"mode,omitempty" jsonschema:"any (the default): return when one has ended; all: when every one has" enum:"any,all"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"how long to wait (default 600, at most 3600); the workers keep running past it"`
}

// WaitTool is vibe_wait.
var WaitTool = registry.Descriptor{
	Name:  "vibe_wait",
	Title: "wait for workers",
	Tier:  tiers.Read,
	Description: "Block until any (or all) of the named workers have ended, and return their results; on timeout, the ones finished and the ids still pending. " +
		"With no ids it waits for what has not been answered yet: a result already read is never returned again. " +
		"It never stops a worker. This is the way to wait: do not poll vibe_list. On timeout, and in progress notifications while it waits, it shows each running worker's last activity and last lines of output.",
	Handler: registry.With(Key, waitFor),
}

// progressEvery is how often a waiting vibe_wait reports the running
// workers' latest output, when they wrote some since the last report.
var progressEvery = 2 * time.Second

// progressText is a progress notification's message: how many ended, and
// each running worker's last activity and last line of output.
func progressText(finished, total int, running []vibe.Info) string {
	var b strings.Builder
	fmt.Fprintf(&b, "vibe: %d of %d workers ended", finished, total)
	for _, in := range running {
		if b.Len() > 1500 {
			b.WriteString("; …")
			break
		}
		fmt.Fprintf(&b, "; %s %s", in.ID, in.Status)
		if in.Status == vibe.Running {
			fmt.Fprintf(&b, ", last activity %s", ago(in.LastActivity))
		}
		if i := strings.LastIndexByte(in.Tail, '\n'); in.Tail != "" {
			fmt.Fprintf(&b, ": %s", textcut.Ellipsis(in.Tail[i+1:], 200))
		}
	}
	return b.String()
}

func waitFor(ctx context.Context, c *registry.Call, r *Roster, p waitParams) (Result, error) {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	timeout = min(timeout, time.Hour)
	if p.Mode != "" && p.Mode != "any" && p.Mode != "all" {
		return Result{}, fmt.Errorf("mode %q: use any or all", p.Mode)
	}
	ids := p.WorkerIDs
	if p.WorkerID != "" && !slices.Contains(ids, p.WorkerID) {
		ids = append(ids, p.WorkerID)
	}
	done, pending, err := r.Wait(ctx, vibe.WaitRequest{IDs: ids, Label: p.Label, All: p.Mode == "all", Timeout: timeout,
		Every: progressEvery,
		Progress: func(finished, total int, running []vibe.Info) {
			c.Progress(ctx, float64(finished), float64(total), progressText(finished, total, running))
		}})
	if err != nil && len(done) == 0 {
		return Result{}, err
	}
	var b strings.Builder
	var running []vibe.Info
	if len(pending) > 0 && (p.Mode == "all" || len(done) == 0) {
		fmt.Fprintf(&b, "waited %s: still running or queued: %s (they go on; wait again)\n", timeout, strings.Join(pending, ", "))
		running = r.Infos(pending)
		for _, in := range running {
			describe(&b, in, false, 0)
		}
	}
	for _, in := range done {
		describe(&b, in, true, resultRoom(c, len(done)))
	}
	return r.finish(Result{Operation: "wait", Workers: done, Pending: pending, Running: running}, &b), nil
}

type killParams struct {
	WorkerID string `json:"worker_id"`
}

// KillTool is vibe_kill.
var KillTool = registry.Descriptor{
	Name:        "vibe_kill",
	Title:       "stop a worker",
	Tier:        tiers.Read,
	Description: "Stop a worker (and every process it started) and return its output so far. Stopping an ended worker changes nothing.",
	Handler:     registry.With(Key, kill),
}

func kill(ctx context.Context, c *registry.Call, r *Roster, p killParams) (Result, error) {
	in, stopped, err := r.Kill(p.WorkerID)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	if !stopped {
		fmt.Fprintf(&b, "%s had ended already (%s); nothing was stopped.\n", in.ID, in.Status)
	}
	describe(&b, in, true, resultRoom(c, 1))
	return r.finish(Result{Operation: "kill", Worker: &in}, &b), nil
}

type listParams struct{}

// ListTool is vibe_list.
var ListTool = registry.Descriptor{
	Name:        "vibe_list",
	Title:       "list workers",
	Tier:        tiers.Read,
	Description: "Every worker: tier, status, elapsed time, last activity, backend, a running worker's last lines of output, and the start of its last result.",
	Handler:     registry.With(Key, list),
}

func list(ctx context.Context, c *registry.Call, r *Roster, p listParams) (Result, error) {
	ws := r.List()
	var b strings.Builder
	if len(ws) == 0 {
		b.WriteString("no workers yet (vibe_spawn starts one)\n")
	}
	for _, in := range ws {
		describe(&b, in, false, 0)
	}
	return r.finish(Result{Operation: "list", Workers: ws}, &b), nil
}

type mergeParams struct {
	WorkerID string `json:"worker_id" jsonschema:"a finished worker that ran with isolation worktree"`
	Strategy string `json:"strategy,omitempty" jsonschema:"merge (the default: a fast-forward when the root's branch has not moved, else a merge commit) or cherry-pick (its commits replayed one by one)" enum:"merge,cherry-pick"`
	Keep     bool   `json:"keep,omitempty" jsonschema:"keep the worktree and branch after a clean merge (default: both are removed)"`
}

// MergeTool is vibe_merge: write tier, so absent in plan and readonly mode.
var MergeTool = registry.Descriptor{
	Name:  "vibe_merge",
	Title: "merge a worker's branch",
	Tier:  tiers.Write,
	Description: "Bring a finished worktree worker's commits into the root's current branch: a merge (fast-forward when the branch has not moved) or a cherry-pick. " +
		"The root must have no uncommitted changes. On a conflict nothing is applied (the root's branch, index and files stay as they were) and the conflicting files are named. " +
		"After a clean merge the worktree and its branch are removed unless keep is true. No hook, filter or merge driver of the repository runs.",
	Handler: registry.With(Key, merge),
}

func merge(ctx context.Context, c *registry.Call, r *Roster, p mergeParams) (Result, error) {
	cherry := false
	switch p.Strategy {
	case "", "merge":
	case "cherry-pick":
		cherry = true
	default:
		return Result{}, fmt.Errorf("strategy %q: use merge or cherry-pick", p.Strategy)
	}
	res, err := r.Merge(vibe.MergeRequest{ID: p.WorkerID, CherryPick: cherry, Keep: p.Keep})
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	how := map[string]string{"fast-forward": "fast-forwarded", "merge": "merged with a merge commit", "cherry-pick": "cherry-picked"}[res.Strategy]
	fmt.Fprintf(&b, "%s's branch: %s %s into %s; %s is now %s.\n", res.Worker.ID, textcut.Count(res.Commits, "commit", "commits"), how, res.Into, res.Into, short(res.Head))
	if len(res.Files) > 0 {
		fmt.Fprintf(&b, "Files changed in the root: %s.\n", names(res.Files, len(res.Files)))
	}
	if res.Removed {
		b.WriteString("Its worktree and branch were removed.\n")
	} else {
		fmt.Fprintf(&b, "Its worktree and branch were kept: %s.\n", res.KeptWhy)
	}
	w := res.Worker
	return r.finish(Result{Operation: "merge", Worker: &w, Merge: &MergeInfo{Into: res.Into, Strategy: res.Strategy, Commits: res.Commits,
		Head: res.Head, Files: res.Files, Removed: res.Removed, KeptWhy: res.KeptWhy}}, &b), nil
}
