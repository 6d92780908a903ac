package vibe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/vibe/agentstream"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
	"github.com/builtin-tools/builtin-tools/vibe/statedir"
	"github.com/builtin-tools/builtin-tools/vibe/worktree"
)

// Status is a worker's state, from a closed set.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	TimedOut  Status = "timed_out"
	Killed    Status = "killed"
	Lost      Status = "lost" // its process vanished, or the process that ran it did
)

// Finished says whether the status is final.
func (s Status) Finished() bool { return s != Queued && s != Running }

// Config configures a roster.
type Config struct {
	// StateDir is the root's state folder: the workers' records, their
	// results and worktrees. It is meant to outlive the process (a cache
	// folder per root), so the next roster over it finds what this one
	// left: workers of a process that no longer runs are taken over, and
	// ids go on from the highest one there.
	StateDir string
	// Backends by tier ("fast", "good") for calls in normal mode, and by
	// BackendKey(tier, mode) ("fast@plan") for plan and readonly: a call
	// outside normal mode starts only a worker whose backend is meant for
	// that mode.
	Backends map[string]runner.Backend
	// Dir is the folder workers run in.
	Dir string
	// MaxRunning bounds the workers running at once (default 4); more wait
	// queued.
	MaxRunning int
	// Timeout is a worker's time limit unless its spawn gives one
	// (default 30 minutes).
	Timeout time.Duration
	// ResultChars bounds the result an answer carries (default 8000); the
	// full text is in the state folder.
	ResultChars int
	// Finished, if set, is told about every worker that ends (for
	// notifications).
	Finished func(Info)
}

// Tiers are the tiers a spawn may name.
var Tiers = []string{"fast", "good"}

// BackendKey is the Backends key of a tier's backend for calls in mode.
func BackendKey(tier, mode string) string {
	if mode == "" || mode == runner.ModeNormal {
		return tier
	}
	return tier + "@" + mode
}

// Info is a worker as answers show it.
type Info struct {
	ID           string               `json:"id"`
	Label        string               `json:"label"`
	Tier         string               `json:"tier"`
	Mode         string               `json:"mode" jsonschema:"the mode of the call that started its last run; its own tools run in that mode"`
	Backend      string               `json:"backend" jsonschema:"what runs it (the command line)"`
	Brief        string               `json:"brief"`
	Status       Status               `json:"status"`
	Runs         int                  `json:"runs" jsonschema:"how many times it was started (vibe_send starts it again)"`
	Started      time.Time            `json:"started,omitzero"`
	Ended        time.Time            `json:"ended,omitzero"`
	LastActivity time.Time            `json:"last_activity,omitzero" jsonschema:"when it last wrote output or error output"`
	Tail         string               `json:"tail,omitempty" jsonschema:"a running worker: the last lines of its output and error output, as it wrote them (at most 8 lines)"`
	ExitCode     *int                 `json:"exit_code,omitempty"`
	Result       string               `json:"result,omitempty" jsonschema:"the last run's result, or its output so far when it was cut short"`
	Truncated    bool                 `json:"truncated,omitempty"`
	ResultFile   string               `json:"result_file,omitempty" jsonschema:"the full result"`
	ResultBytes  int64                `json:"result_bytes,omitempty" jsonschema:"the size of the full result"`
	Notes        []string             `json:"notes,omitempty" jsonschema:"what of its output was not kept, or not read as it was meant"`
	Stderr       string               `json:"stderr,omitempty" jsonschema:"the last of its error output, for a failed run"`
	Usage        *agentstream.Usage   `json:"usage,omitempty" jsonschema:"what its last run used, as the backend reported it (so far, while it runs)"`
	Spent        *agentstream.Usage   `json:"spent,omitempty" jsonschema:"what all its runs used together, which its budget is measured against"`
	MaxCost      float64              `json:"max_cost,omitempty" jsonschema:"its budget in US dollars, from the cost the backend reports"`
	MaxTokens    int                  `json:"max_tokens,omitempty" jsonschema:"its budget in tokens (every input token, cached ones too, and every output token)"`
	OverBudget   bool                 `json:"over_budget,omitempty" jsonschema:"it was stopped, and failed, because its usage passed its budget"`
	Session      *agentstream.Session `json:"session,omitempty" jsonschema:"the agent CLI's session its runs reported (claude's session_id, codex's thread_id); vibe_send resumes it"`
	Resumed      bool                 `json:"resumed,omitempty" jsonschema:"its last run resumed that session with only the message vibe_send gave; else a run gets the whole brief"`
	Branch       string               `json:"branch,omitempty" jsonschema:"isolation worktree: the worker's branch"`
	Worktree     string               `json:"worktree,omitempty" jsonschema:"isolation worktree: its folder while it holds commits or changes"`
	BaseCommit   string               `json:"base_commit,omitempty" jsonschema:"isolation worktree: the commit its worktree starts from (the root's HEAD at spawn)"`
	Uncommitted  []string             `json:"uncommitted,omitempty" jsonschema:"isolation worktree: the checkout's tracked files with uncommitted changes at spawn (at most 100 named); not in the worktree unless carried"`
	Untracked    []string             `json:"untracked,omitempty" jsonschema:"isolation worktree: the checkout's untracked files at spawn (at most 100 named); never in the worktree"`
	Carried      bool                 `json:"carried,omitempty" jsonschema:"the uncommitted changes of tracked files were carried into the worktree"`
	Commits      int                  `json:"commits,omitempty"`
	FilesChanged []string             `json:"files_changed,omitempty"`
	Diffstat     string               `json:"diffstat,omitempty"`
	Why          string               `json:"why,omitempty" jsonschema:"why it failed, timed out, was stopped or was lost"`
	From         string               `json:"from,omitempty" jsonschema:"set when an earlier process ran it: which one (this process took its record over)"`
}

type worker struct {
	info    Info
	timeout time.Duration
	gate    runner.Gate
	cancel  context.CancelFunc
	reason  Status // what stopped it: Killed, TimedOut, or "" (it ended)
	stopWhy string // with Killed: who stopped it
	done    chan struct{}
	unread  bool
	run     func()
	dir     string         // where it runs without isolation
	iso     *worktree.Tree // nil: the worker runs in dir
	wantIso bool
	co      *worktree.Checkout // what its worktree starts from; nil: read at its start
	tail    *proc.Tail         // the running run's last output; nil before it starts
	// resume is the session the next run resumes with only message.
	resume  *agentstream.Session
	message string
	prior   *agentstream.Usage // what the runs before this one used
	merging bool               // Merge is bringing its branch into the root
}

// Roster is a run's workers.
type Roster struct {
	cfg     Config
	suffix  string // this roster's part of branch names
	mu      sync.Mutex
	ws      map[string]*worker
	order   []string
	queue   []*worker // waiting for a slot, in spawn order
	running int
	// changed is closed and replaced on every change, waking waiters.
	changed chan struct{}
	closed  bool
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup

	folder  statedir.Folder // where each worker's files are
	ids     *statedir.IDs   // the ids given over the state folder
	journal                 // the workers' records there; it shares mu
	users   *os.File        // the shared lock that says this roster uses the folder
}

// New makes a roster over cfg.StateDir, taking over the workers left there
// by processes that no longer run.
func New(cfg Config) (*Roster, error) {
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.ResultChars <= 0 {
		cfg.ResultChars = 8000
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "workers"), 0o700); err != nil {
		return nil, err
	}
	users := statedir.Use(cfg.StateDir, 10*time.Second)
	if cfg.Dir != "" {
		statedir.WriteRootName(cfg.StateDir, cfg.Dir)
	}
	ctx, stop := context.WithCancel(context.Background())
	var sfx [3]byte
	rand.Read(sfx[:])
	folder := statedir.Folder(cfg.StateDir)
	r := &Roster{cfg: cfg, suffix: hex.EncodeToString(sfx[:]), ws: map[string]*worker{},
		changed: make(chan struct{}), ctx: ctx, stop: stop, folder: folder, ids: &statedir.IDs{Folder: folder}, users: users}
	r.journal = journal{mu: &r.mu, folder: folder, owner: ownerName(), dirty: map[string]*worker{}}
	if err := r.adopt(); err != nil {
		stop()
		if users != nil {
			users.Close()
		}
		return nil, err
	}
	r.Flush()
	return r, nil
}

// changedLocked wakes waiters. r.mu is held.
func (r *Roster) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// SpawnRequest is what vibe_spawn asks for.
type SpawnRequest struct {
	Brief, Label, Tier string
	Timeout            time.Duration
	Dir                string // default Config.Dir
	// Worktree runs the worker in a git worktree of its own.
	Worktree bool
	// CarryChanges brings the checkout's uncommitted changes of tracked
	// files into the worktree.
	CarryChanges bool
	// Gate is the caller's mode and policy. Outside normal mode the tier
	// needs a backend for that mode, and the worker runs in a worktree.
	Gate runner.Gate
	// MaxCost (US dollars) and MaxTokens are the worker's budget over all
	// its runs, from the usage its backend reports; 0 is no limit. A run
	// whose usage passes it is stopped and fails.
	MaxCost   float64
	MaxTokens int
}

// backendFor returns the tier's backend for calls in mode, or an error
// that says how to configure one.
func (r *Roster) backendFor(tier, mode string) (runner.Backend, error) {
	if b, ok := r.cfg.Backends[BackendKey(tier, mode)]; ok {
		return b, nil
	}
	known := r.tiers()
	if !slices.Contains(known, tier) && !slices.Contains(Tiers, tier) {
		return nil, fmt.Errorf("unknown tier %q; use one of %s", tier, strings.Join(known, ", "))
	}
	if mode == runner.ModeNormal {
		return nil, fmt.Errorf("tier %s has no worker command for normal mode; configure one with --worker-command %s='CMD'", tier, tier)
	}
	return nil, fmt.Errorf("tier %s has no worker command for %s mode, so this %s-mode call cannot start a worker: "+
		"the vibe tools are read tier, and the gate is the worker's own, so a worker started from %s mode must run its tools in %s mode. "+
		"Configure one with --worker-command %s='CMD' (it gets VIBE_MODE=%s and VIBE_APPROVE in its environment, and {mode} and {approve} in its line)",
		tier, mode, mode, mode, mode, BackendKey(tier, mode), mode)
}

// describeAs says what runs a worker of b started with gate g.
func describeAs(b runner.Backend, g runner.Gate) string {
	if d, ok := b.(interface{ DescribeAs(runner.Gate) string }); ok {
		return d.DescribeAs(g)
	}
	return b.Describe()
}

// listMax bounds the file names a spawn answer records.
const listMax = 100

// Spawn starts a worker (or queues it when MaxRunning are running) and
// returns at once.
func (r *Roster) Spawn(req SpawnRequest) (Info, error) {
	if strings.TrimSpace(req.Brief) == "" {
		return Info{}, errors.New("the brief is empty: say what the worker is to do")
	}
	if req.MaxCost < 0 || math.IsNaN(req.MaxCost) || math.IsInf(req.MaxCost, 0) {
		return Info{}, fmt.Errorf("max_cost %v: give a budget in US dollars above 0, or leave it out for no limit", req.MaxCost)
	}
	if req.MaxTokens < 0 {
		return Info{}, fmt.Errorf("max_tokens %d: give a number of tokens above 0, or leave it out for no limit", req.MaxTokens)
	}
	if req.Tier == "" {
		req.Tier = "fast"
	}
	mode := req.Gate.CallMode()
	b, err := r.backendFor(req.Tier, mode)
	if err != nil {
		return Info{}, err
	}
	if mode != runner.ModeNormal && !req.Worktree {
		return Info{}, fmt.Errorf("a worker started from %s mode runs in a git worktree of its own, never in the root: spawn it with isolation worktree", mode)
	}
	if req.CarryChanges && !req.Worktree {
		return Info{}, errors.New("carry_changes brings uncommitted changes into a worktree: it needs isolation worktree")
	}
	if err := b.Check(); err != nil {
		return Info{}, fmt.Errorf("tier %s cannot start workers: %w", req.Tier, err)
	}
	if req.Timeout <= 0 {
		req.Timeout = r.cfg.Timeout
	}
	if req.Dir == "" {
		req.Dir = r.cfg.Dir
	}
	var co *worktree.Checkout
	if req.Worktree {
		if co, err = worktree.Inspect(req.Dir, req.CarryChanges); err != nil && mode != runner.ModeNormal {
			return Info{}, fmt.Errorf("a worker started from %s mode runs in a git worktree of its own, never in the root, and here it cannot: %w", mode, err)
		} else if err != nil {
			return Info{}, err
		}
	}
	id := r.ids.NewID()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		os.Remove(r.folder.WorkerDir(id))
		return Info{}, errors.New("the run is closing: no new workers")
	}
	if req.Label == "" {
		req.Label = id
	}
	w := &worker{info: Info{ID: id, Label: req.Label, Tier: req.Tier, Brief: req.Brief, Status: Queued, MaxCost: req.MaxCost, MaxTokens: req.MaxTokens},
		timeout: req.Timeout, wantIso: req.Worktree, co: co, dir: req.Dir}
	if co != nil {
		w.info.BaseCommit = co.Head
		w.info.Uncommitted = co.Uncommitted[:min(len(co.Uncommitted), listMax)]
		w.info.Untracked = co.Untracked[:min(len(co.Untracked), listMax)]
		w.info.Carried = co.Stash != ""
	}
	r.ws[id] = w
	r.order = append(r.order, id)
	r.startLocked(w, b, req.Gate)
	info := w.info
	r.mu.Unlock()
	r.Flush()
	return info, nil
}

// UncommittedCounts says how many tracked files with changes and how many
// untracked files the checkout had when worker id was spawned.
func (r *Roster) UncommittedCounts(id string) (changed, untracked int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.ws[id]; w != nil && w.co != nil {
		return len(w.co.Uncommitted), len(w.co.Untracked)
	}
	return 0, 0
}

// tiers are the tiers some backend is configured for, in any mode.
func (r *Roster) tiers() []string {
	var out []string
	for key := range r.cfg.Backends {
		t, _, _ := strings.Cut(key, "@")
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// startLocked queues a run of w; runs start in spawn order as slots free.
// r.mu is held.
func (r *Roster) startLocked(w *worker, b runner.Backend, g runner.Gate) {
	ctx, cancel := context.WithCancel(r.ctx)
	w.cancel, w.reason, w.stopWhy, w.done, w.gate = cancel, "", "", make(chan struct{}), g
	w.info.Status, w.info.Runs, w.info.Mode, w.info.Backend = Queued, w.info.Runs+1, g.CallMode(), describeAs(b, g)
	w.info.Result, w.info.Truncated, w.info.ResultFile, w.info.ResultBytes, w.info.Notes = "", false, "", 0, nil
	w.info.Stderr, w.info.ExitCode, w.info.Usage, w.info.Why, w.info.From = "", nil, nil, "", ""
	w.info.Started, w.info.Ended = time.Time{}, time.Time{}
	w.info.Commits, w.info.FilesChanged, w.info.Diffstat, w.info.Resumed, w.info.OverBudget = 0, nil, "", false, false
	w.prior = w.info.Spent
	w.unread, w.tail = false, nil
	w.run = func() { r.run(ctx, cancel, w, b) }
	r.markLocked(w)
	r.queue = append(r.queue, w)
	r.changedLocked()
	r.dispatchLocked()
	// A queued run that is stopped before it starts ends as killed.
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-ctx.Done()
		r.mu.Lock()
		i := slices.Index(r.queue, w)
		if i < 0 {
			r.mu.Unlock()
			return
		}
		r.queue = slices.Delete(r.queue, i, i+1)
		r.mu.Unlock()
		r.finish(w, runner.Outcome{}, nil, nil)
		close(w.done)
	}()
}

// dispatchLocked starts queued runs while slots are free. r.mu is held.
func (r *Roster) dispatchLocked() {
	for r.running < r.cfg.MaxRunning && len(r.queue) > 0 {
		w := r.queue[0]
		r.queue = r.queue[1:]
		r.running++
		w.info.Status, w.info.Started, w.info.LastActivity = Running, time.Now(), time.Now()
		r.markLocked(w)
		r.changedLocked()
		r.wg.Add(1)
		go w.run()
	}
}

// headBytes is how much of a run's output stays in memory for answers.
func (r *Roster) headBytes() int { return max(64<<10, 4*r.cfg.ResultChars+8) }

func (r *Roster) run(ctx context.Context, cancel context.CancelFunc, w *worker, b runner.Backend) {
	defer r.wg.Done()
	defer cancel()
	r.Flush()
	r.mu.Lock()
	done := w.done
	job := runner.Job{ID: w.info.ID, Label: w.info.Label, Tier: w.info.Tier, Brief: w.info.Brief, Dir: w.dir, Mode: w.gate.CallMode(), Approve: w.gate.Approve}
	if w.resume != nil {
		job.Brief, job.Resume = w.message, w.resume
	}
	iso, wantIso, co, run := w.iso, w.wantIso, w.co, w.info.Runs
	r.mu.Unlock()
	if iso != nil && !iso.Exists() {
		iso = nil
	}
	if wantIso && iso == nil {
		var err error
		if co == nil {
			co, err = worktree.Inspect(w.dir, false)
		}
		if err == nil {
			iso, err = worktree.Add(r.cfg.StateDir, co, w.info.Label, w.info.ID, r.suffix)
		}
		if err != nil {
			r.finish(w, runner.Outcome{}, fmt.Errorf("making its worktree: %w", err), nil)
			r.release(done)
			return
		}
		r.mu.Lock()
		w.iso = iso
		w.info.Branch, w.info.Worktree = iso.Branch, iso.Dir
		r.markLocked(w)
		r.mu.Unlock()
		r.Flush()
	}
	if iso != nil {
		job.Dir = iso.Cwd()
	}
	job.Activity = func() {
		r.mu.Lock()
		w.info.LastActivity = time.Now()
		r.mu.Unlock()
	}
	job.Usage = func(u agentstream.Usage) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.spendLocked(w, u)
		if why := overBudget(w.info); why != "" && w.reason == "" {
			w.reason, w.stopWhy, w.info.OverBudget = overBudgetReason, why, true
			r.markLocked(w)
			cancel()
		}
	}
	s := statedir.NewSink(r.folder.PartPath(w.info.ID, run), r.headBytes(), runner.MemoryMax)
	tail := proc.NewTail(tailKeep)
	r.mu.Lock()
	w.tail = tail
	r.mu.Unlock()
	job.Output, job.Log = io.MultiWriter(s, tail), tail
	tctx, tcancel := context.WithTimeout(ctx, w.timeout)
	out, err := b.Run(tctx, job)
	if tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.mu.Lock()
		w.reason = TimedOut
		r.mu.Unlock()
	}
	tcancel()
	if iso != nil {
		commits, files, stat := iso.Report()
		kept := iso.Cleanup()
		r.mu.Lock()
		w.info.Commits, w.info.FilesChanged, w.info.Diffstat = commits, files, stat
		if !kept {
			w.iso, w.info.Worktree, w.info.Branch = nil, "", ""
		}
		r.mu.Unlock()
	}
	r.finish(w, out, err, s)
	r.release(done)
}

// release frees a run's slot and starts the next queued run.
func (r *Roster) release(done chan struct{}) {
	r.mu.Lock()
	r.running--
	r.dispatchLocked()
	r.mu.Unlock()
	close(done)
	r.Flush()
}

// finish records a run's end. s is the sink its output went to (nil when
// it never started).
func (r *Roster) finish(w *worker, out runner.Outcome, err error, s *statedir.Sink) {
	// The result file is written before the lock is taken: a run's number
	// changes only after its done channel closes, which is after this.
	r.mu.Lock()
	run := w.info.Runs
	r.mu.Unlock()
	path := r.folder.ResultPath(w.info.ID, run)
	var res statedir.Output
	// A backend's own result wins; else the result is the output it wrote.
	if s == nil || out.Result != "" || s.Empty() {
		res = statedir.Output{Head: out.Result, Whole: true, Bytes: int64(len(out.Result))}
		if out.Result != "" && statedir.WriteWhole(path, []byte(out.Result)) == nil {
			res.File = path
		}
		if s != nil && !s.Empty() {
			// Output besides the result (progress, an over-long line) is
			// kept too, and named.
			other := s.Close(strings.TrimSuffix(path, ".result.txt") + ".output.txt")
			res.Notes = append(res.Notes, other.Notes...)
			if other.File != "" {
				res.Notes = append(res.Notes, fmt.Sprintf("besides its result it wrote %d bytes of other output, kept in %s", other.Bytes, other.File))
			}
		} else if s != nil {
			s.Discard()
		}
	} else {
		res = s.Close(path)
	}
	r.mu.Lock()
	code := out.ExitCode
	w.info.Ended = time.Now()
	if out.Usage != nil {
		r.spendLocked(w, *out.Usage)
	}
	if why := overBudget(w.info); why != "" && w.reason == "" {
		w.reason, w.stopWhy, w.info.OverBudget = overBudgetReason, why, true
	}
	switch {
	case w.reason == overBudgetReason:
		w.info.Status, w.info.Why = Failed, "over budget: "+w.stopWhy+"; it was stopped when its usage passed the budget, and the result is its output so far"
		if out.Final {
			w.info.Why = "over budget: " + w.stopWhy + ", as reported with its final result (kept as the result)"
		}
	case w.reason == Killed:
		w.info.Status, w.info.Why = Killed, w.stopWhy+" while it ran; the result is its output so far"
		if s == nil {
			w.info.Why = w.stopWhy + " before it started"
		}
	case w.reason == TimedOut:
		w.info.Status, w.info.Why = TimedOut, fmt.Sprintf("the time limit (%s) ran out; the result is its output so far", w.timeout)
	case err != nil:
		w.info.Status, w.info.Why = Failed, err.Error()
	case out.Vanished:
		w.info.Status, w.info.Why = Lost, "its process died of a signal this run did not send"
	case code != 0:
		w.info.Status, w.info.Why = Failed, fmt.Sprintf("exit status %d", code)
		if len(out.Errors) > 0 {
			w.info.Why += "; " + strings.Join(out.Errors, "; ")
		}
	case len(out.Errors) > 0:
		w.info.Status, w.info.Why = Failed, strings.Join(out.Errors, "; ")
	case !out.Final:
		w.info.Status, w.info.Why = Failed, "it ended without a final result"
	default:
		w.info.Status = Succeeded
	}
	// A run stopped for its budget may or may not have exited by itself
	// first (the last report can come with its end): no exit code.
	if err == nil && code >= 0 && !w.info.Started.IsZero() && w.reason != overBudgetReason {
		w.info.ExitCode = &code
	}
	w.info.Usage = out.Usage
	if out.Session != nil {
		w.info.Session = out.Session
	}
	if w.info.Status == Failed || w.info.Status == Lost || w.info.Status == TimedOut {
		w.info.Stderr = out.Stderr
	}
	w.info.Notes = append(slices.Clone(out.Notes), res.Notes...)
	if w.info.MaxCost > 0 && (w.info.Spent == nil || w.info.Spent.CostUSD == 0) && !w.info.Started.IsZero() {
		w.info.Notes = append(w.info.Notes, fmt.Sprintf("its cost budget ($%g) was not enforced: the backend reported no cost (of the agent CLIs only claude reports one, with its result; a token budget works from tokens)", w.info.MaxCost))
	}
	r.setResultLocked(w, res)
	w.unread = true
	r.markLocked(w)
	r.changedLocked()
	if r.cfg.Finished != nil {
		info := w.info
		go r.cfg.Finished(info)
	}
	r.mu.Unlock()
	r.Flush()
}

// overBudgetReason is a run stopped by its budget (w.reason).
const overBudgetReason Status = "over_budget"

// spendLocked records u as the running run's usage so far. r.mu is held.
func (r *Roster) spendLocked(w *worker, u agentstream.Usage) {
	w.info.Usage = &u
	total := u
	if p := w.prior; p != nil {
		total.InputTokens += p.InputTokens
		total.CachedInputTokens += p.CachedInputTokens
		total.OutputTokens += p.OutputTokens
		total.CostUSD += p.CostUSD
	}
	w.info.Spent = &total
}

// overBudget says how in's usage passed its budget, or "".
func overBudget(in Info) string {
	s := in.Spent
	if s == nil {
		return ""
	}
	if in.MaxTokens > 0 && s.Tokens() > in.MaxTokens {
		return fmt.Sprintf("%d tokens used (%d in, %d out) of a budget of %d", s.Tokens(), s.InputTokens, s.OutputTokens, in.MaxTokens)
	}
	if in.MaxCost > 0 && s.CostUSD > in.MaxCost {
		return fmt.Sprintf("$%.4f spent of a budget of $%g", s.CostUSD, in.MaxCost)
	}
	return ""
}

// setResultLocked puts a run's output in w's answer: all of it when it is
// short or no file holds it, else its start. r.mu is held.
func (r *Roster) setResultLocked(w *worker, res statedir.Output) {
	text := res.Head
	if res.Whole {
		text = strings.TrimRight(text, "\n")
	}
	w.info.ResultFile, w.info.ResultBytes = res.File, res.Bytes
	w.info.Result, w.info.Truncated = text, !res.Whole
	// Cut only a result whose whole text is on disk.
	if rs := []rune(text); res.File != "" && len(rs) > r.cfg.ResultChars {
		w.info.Result, w.info.Truncated = string(rs[:r.cfg.ResultChars]), true
	}
	if res.File == "" && !res.Whole {
		w.info.Truncated = true
	}
}

// lookup returns a worker or an error naming the known ones. r.mu is held.
func (r *Roster) lookupLocked(id string) (*worker, error) {
	if w := r.ws[id]; w != nil {
		return w, nil
	}
	if len(r.order) == 0 {
		return nil, fmt.Errorf("no worker %q: there are no workers yet (vibe_spawn starts one)", id)
	}
	return nil, fmt.Errorf("no worker %q; the workers are %s", id, strings.Join(r.order, ", "))
}

// halt ends a worker's run, if one is going, and waits for it; it
// returns the worker (r.mu held again) and whether a run was stopped. why
// says who stopped it, for the record. check, if set, may refuse before
// anything is stopped (r.mu held).
func (r *Roster) halt(id, why string, check func(*worker) error) (*worker, bool, error) {
	r.mu.Lock()
	w, err := r.lookupLocked(id)
	if err == nil && check != nil {
		err = check(w)
	}
	if err != nil {
		r.mu.Unlock()
		return nil, false, err
	}
	stopped := false
	if !w.info.Status.Finished() {
		stopped = true
		w.reason, w.stopWhy = Killed, why
		w.cancel()
	}
	done := w.done
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	return w, stopped, nil
}

// Kill stops a worker and returns it with its partial output, and whether
// a run was stopped: killing a finished worker changes nothing.
func (r *Roster) Kill(id string) (info Info, stopped bool, err error) {
	w, stopped, err := r.halt(id, "vibe_kill stopped it", nil)
	if err != nil {
		return Info{}, false, err
	}
	if w.unread {
		w.unread = false
		r.markLocked(w)
	}
	info = w.info
	r.mu.Unlock()
	r.Flush()
	return info, stopped, nil
}

// Send appends message to the worker's brief and runs it again in normal
// mode, stopping a running one first (restarted says so).
func (r *Roster) Send(id, message string) (info Info, restarted bool, err error) {
	return r.SendAs(runner.Gate{}, id, message)
}

// SendAs is Send from a call with gate g: the new run gets the backend of
// g's mode and g's policy. Outside normal mode a worker without a worktree
// is refused before anything is stopped.
func (r *Roster) SendAs(g runner.Gate, id, message string) (info Info, restarted bool, err error) {
	if strings.TrimSpace(message) == "" {
		return Info{}, false, errors.New("the message is empty")
	}
	mode := g.CallMode()
	var b runner.Backend
	w, restarted, err := r.halt(id, "vibe_send stopped it to run it again", func(w *worker) error {
		var err error
		if b, err = r.backendFor(w.info.Tier, mode); err != nil {
			return err
		}
		if w.merging {
			return fmt.Errorf("%s's branch is being merged (vibe_merge): send once that has answered", w.info.ID)
		}
		if mode != runner.ModeNormal && !w.wantIso {
			return fmt.Errorf("%s runs in the root (vibe_spawn started it with isolation none); from %s mode only a worker in a worktree of its own can be run again: vibe_spawn a new one, which from %s mode gets a worktree", w.info.ID, mode, mode)
		}
		return nil
	})
	if err != nil {
		return Info{}, false, err
	}
	if r.closed {
		r.mu.Unlock()
		return Info{}, restarted, errors.New("the run is closing: no new runs")
	}
	// A session the last run reported, from a call in the same mode, is
	// resumed with only the message; otherwise the whole brief runs again.
	w.resume, w.message = nil, ""
	if s := w.info.Session; s != nil && w.info.Mode == mode {
		if rb, ok := b.(interface {
			Resumes(agentstream.Session) bool
		}); ok && rb.Resumes(*s) {
			w.resume, w.message = s, message
		}
	}
	w.info.Brief += "\n\n" + message
	r.startLocked(w, b, g)
	w.info.Resumed = w.resume != nil
	info = w.info
	r.mu.Unlock()
	r.Flush()
	return info, restarted, nil
}

// WaitRequest is what vibe_wait asks for.
type WaitRequest struct {
	IDs   []string
	Label string
	All   bool // every one finished (else any)
	// Timeout bounds the wait; the workers are never stopped by it.
	Timeout time.Duration
	// Progress, if set, is told how many have finished whenever that
	// changes, with the ones still running as List shows them (their last
	// lines of output); with Every, also every Every while one of those
	// has shown a sign of life since the last report.
	Progress func(finished, total int, running []Info)
	Every    time.Duration
}

// Wait blocks until any (or all) of the workers named have finished, the
// timeout passes or ctx ends, and returns the finished ones (their results
// now read) and the ids still pending.
func (r *Roster) Wait(ctx context.Context, req WaitRequest) (done []Info, pending []string, err error) {
	r.mu.Lock()
	ids := slices.Clone(req.IDs)
	if req.Label != "" {
		for _, id := range r.order {
			if r.ws[id].info.Label == req.Label {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			r.mu.Unlock()
			return nil, nil, fmt.Errorf("no worker is labelled %q", req.Label)
		}
	}
	if len(ids) == 0 && len(r.order) == 0 {
		r.mu.Unlock()
		return nil, nil, errors.New("there are no workers to wait for (vibe_spawn starts one)")
	}
	if len(ids) == 0 {
		// No ids: what has not been answered yet — workers still running or
		// queued, and finished ones whose result no answer carried. A result
		// already read is never the answer again.
		for _, id := range r.order {
			if w := r.ws[id]; !w.info.Status.Finished() || w.unread {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			r.mu.Unlock()
			return nil, nil, fmt.Errorf("every worker has ended and its result was read already (%s; vibe_list shows them); nothing is left to wait for", textcut.Count(len(r.order), "worker", "workers"))
		}
	}
	for _, id := range ids {
		if _, err := r.lookupLocked(id); err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
	}
	r.mu.Unlock()
	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if req.Every > 0 && req.Progress != nil {
		t := time.NewTicker(req.Every)
		defer t.Stop()
		tick = t.C
	}
	last := -1
	var reported time.Time // the latest activity a report showed
	ticked := false
	for {
		r.mu.Lock()
		done, pending = done[:0], pending[:0]
		var running []Info
		latest := reported
		for _, id := range ids {
			if w := r.ws[id]; w.info.Status.Finished() {
				done = append(done, w.info)
			} else {
				pending = append(pending, id)
				running = append(running, r.infoLocked(w))
				if w.info.LastActivity.After(latest) {
					latest = w.info.LastActivity
				}
			}
		}
		ok := len(done) == len(ids) || !req.All && len(done) > 0
		changed := r.changed
		r.mu.Unlock()
		if ok {
			r.markRead(done)
		}
		if req.Progress != nil && (len(done) != last || ticked && latest.After(reported)) {
			last, reported = len(done), latest
			req.Progress(len(done), len(ids), running)
		}
		ticked = false
		if ok {
			return done, pending, nil
		}
		select {
		case <-changed:
		case <-tick:
			ticked = true
		case <-timer.C:
			r.markRead(done)
			return done, pending, nil
		case <-ctx.Done():
			return done, pending, ctx.Err()
		}
	}
}

func (r *Roster) markRead(infos []Info) {
	r.mu.Lock()
	for _, d := range infos {
		if w := r.ws[d.ID]; w.unread {
			w.unread = false
			r.markLocked(w)
		}
	}
	r.mu.Unlock()
	r.Flush()
}

// List returns every worker, in spawn order; a running one with the last
// lines of its output.
func (r *Roster) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Info, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.infoLocked(r.ws[id]))
	}
	return out
}

// Infos returns the workers of ids that exist, as List shows them.
func (r *Roster) Infos(ids []string) []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Info, 0, len(ids))
	for _, id := range ids {
		if w := r.ws[id]; w != nil {
			out = append(out, r.infoLocked(w))
		}
	}
	return out
}

// What a running worker's tail shows: its last lines, each cut to a
// width, from the last bytes it wrote.
const (
	tailKeep  = 8 << 10
	tailLines = 8
	tailWidth = 240
)

// infoLocked is w as answers show it: a running worker with its tail.
// r.mu is held.
func (r *Roster) infoLocked(w *worker) Info {
	in := w.info
	if w.info.Status == Running && w.tail != nil {
		in.Tail = tailText(w.tail.Last(tailLines * tailWidth))
	}
	return in
}

// tailText is the last tailLines lines of s, each at most tailWidth
// characters.
func tailText(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	for i, l := range lines {
		lines[i] = textcut.Ellipsis(strings.TrimRight(l, "\r"), tailWidth)
	}
	return strings.Join(lines, "\n")
}

// Unread lists the finished workers whose results no answer has carried.
func (r *Roster) Unread() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range r.order {
		if w := r.ws[id]; w.unread && w.info.Status.Finished() {
			out = append(out, id)
		}
	}
	return out
}

// Close stops every worker and waits for them. The records of workers
// whose results were read and that hold no worktree are removed; the
// others stay in the state folder, released for the next roster to take,
// and Kept says which and why. A state folder left with no record, and no
// other roster using it, is removed.
func (r *Roster) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	// No worker is added once closed is set: these are all of them.
	all := make([]*worker, 0, len(r.order))
	for _, id := range r.order {
		w := r.ws[id]
		if !w.info.Status.Finished() {
			w.reason, w.stopWhy = Killed, "the run closed"
		}
		all = append(all, w)
	}
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	err := r.closeRecords(all)
	if r.users != nil {
		if err == nil {
			statedir.RemoveIdle(r.cfg.StateDir, r.users)
		}
		r.users.Close()
	}
	return err
}
