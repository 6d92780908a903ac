package vibe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
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
	Lost      Status = "lost" // its process vanished
)

// Finished says whether the status is final.
func (s Status) Finished() bool { return s != Queued && s != Running }

// Config configures a roster.
type Config struct {
	// StateDir holds the journal (events.jsonl) and the full results.
	StateDir string
	// Backends by tier: "fast" and "good".
	Backends map[string]Backend
	// Dir is the folder workers run in.
	Dir string
	// MaxRunning bounds the workers running at once (default 4); more wait
	// queued.
	MaxRunning int
	// Timeout is a worker's time limit unless its spawn gives one
	// (default 30 minutes).
	Timeout time.Duration
	// ResultChars bounds the result an answer carries (default 8000); the
	// full text is in the journal's folder.
	ResultChars int
	// Finished, if set, is told about every worker that ends (for
	// notifications).
	Finished func(Info)
}

// Tiers are the tiers a spawn may name.
var Tiers = []string{"fast", "good"}

// Info is a worker as answers show it.
type Info struct {
	ID           string    `json:"id"`
	Label        string    `json:"label"`
	Tier         string    `json:"tier"`
	Backend      string    `json:"backend" jsonschema:"what runs it (the resolved command line)"`
	Brief        string    `json:"brief"`
	Status       Status    `json:"status"`
	Runs         int       `json:"runs" jsonschema:"how many times it was started (vibe_send starts it again)"`
	Started      time.Time `json:"started,omitzero"`
	Ended        time.Time `json:"ended,omitzero"`
	LastActivity time.Time `json:"last_activity,omitzero"`
	ExitCode     *int      `json:"exit_code,omitempty"`
	Result       string    `json:"result,omitempty" jsonschema:"the last run's result, or its output so far when it was cut short"`
	Truncated    bool      `json:"truncated,omitempty"`
	ResultFile   string    `json:"result_file,omitempty" jsonschema:"the full result"`
	Stderr       string    `json:"stderr,omitempty" jsonschema:"the last of its error output, for a failed run"`
	Usage        *Usage    `json:"usage,omitempty"`
	Branch       string    `json:"branch,omitempty" jsonschema:"isolation worktree: the worker's branch"`
	Worktree     string    `json:"worktree,omitempty" jsonschema:"isolation worktree: its folder while it holds commits or changes"`
	Commits      int       `json:"commits,omitempty"`
	FilesChanged []string  `json:"files_changed,omitempty"`
	Diffstat     string    `json:"diffstat,omitempty"`
	Why          string    `json:"why,omitempty" jsonschema:"why it failed, timed out or was lost"`
}

type worker struct {
	info    Info
	timeout time.Duration
	cancel  context.CancelFunc
	reason  Status // what stopped it: Killed, TimedOut, or "" (it ended)
	done    chan struct{}
	unread  bool
	run     func()
	iso     *isolation // nil: the worker runs in the root
	wantIso bool
}

// Roster is a run's workers.
type Roster struct {
	cfg     Config
	mu      sync.Mutex
	ws      map[string]*worker
	order   []string
	next    int
	queue   []*worker // waiting for a slot, in spawn order
	running int
	// changed is closed and replaced on every change, waking waiters.
	changed chan struct{}
	journal *os.File
	closed  bool
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// New makes a roster; its journal is created in cfg.StateDir.
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
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, err
	}
	j, err := os.OpenFile(filepath.Join(cfg.StateDir, "events.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Roster{cfg: cfg, ws: map[string]*worker{}, changed: make(chan struct{}), journal: j, ctx: ctx, stop: stop}, nil
}

// changedLocked wakes waiters. r.mu is held.
func (r *Roster) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// logLocked appends an event to the journal. r.mu is held.
func (r *Roster) logLocked(w *worker, event string) {
	rec := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "id": w.info.ID, "event": event, "status": w.info.Status, "run": w.info.Runs}
	if w.info.ResultFile != "" && w.info.Status.Finished() {
		rec["result_file"] = w.info.ResultFile
	}
	b, _ := json.Marshal(rec)
	r.journal.Write(append(b, '\n'))
}

// SpawnRequest is what vibe_spawn asks for.
type SpawnRequest struct {
	Brief, Label, Tier string
	Timeout            time.Duration
	Dir                string // default Config.Dir
	// Worktree runs the worker in a git worktree of its own.
	Worktree bool
}

// Spawn starts a worker (or queues it when MaxRunning are running) and
// returns at once.
func (r *Roster) Spawn(req SpawnRequest) (Info, error) {
	if strings.TrimSpace(req.Brief) == "" {
		return Info{}, errors.New("the brief is empty: say what the worker is to do")
	}
	if req.Tier == "" {
		req.Tier = "fast"
	}
	b, ok := r.cfg.Backends[req.Tier]
	if !ok {
		return Info{}, fmt.Errorf("unknown tier %q; use one of %s", req.Tier, strings.Join(r.tiers(), ", "))
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
	if req.Worktree {
		if _, _, _, err := repoOf(req.Dir); err != nil {
			return Info{}, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Info{}, errors.New("the run is closing: no new workers")
	}
	r.next++
	id := "w" + strconv.Itoa(r.next)
	if req.Label == "" {
		req.Label = id
	}
	w := &worker{info: Info{ID: id, Label: req.Label, Tier: req.Tier, Backend: b.Describe(), Brief: req.Brief, Status: Queued}, timeout: req.Timeout, wantIso: req.Worktree}
	r.ws[id] = w
	r.order = append(r.order, id)
	r.startLocked(w, b, req.Dir)
	return w.info, nil
}

func (r *Roster) tiers() []string {
	var out []string
	for t := range r.cfg.Backends {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// startLocked queues a run of w; runs start in spawn order as slots free.
// r.mu is held.
func (r *Roster) startLocked(w *worker, b Backend, dir string) {
	ctx, cancel := context.WithCancel(r.ctx)
	w.cancel, w.reason, w.done = cancel, "", make(chan struct{})
	w.info.Status, w.info.Runs = Queued, w.info.Runs+1
	w.info.Result, w.info.Truncated, w.info.ResultFile, w.info.Stderr, w.info.ExitCode, w.info.Usage, w.info.Why = "", false, "", "", nil, nil, ""
	w.info.Started, w.info.Ended = time.Time{}, time.Time{}
	w.info.Commits, w.info.FilesChanged, w.info.Diffstat = 0, nil, ""
	w.unread = false
	w.run = func() { r.run(ctx, cancel, w, b, dir) }
	r.logLocked(w, "queued")
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
		r.finish(w, Outcome{}, nil)
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
		r.logLocked(w, "running")
		r.changedLocked()
		r.wg.Add(1)
		go w.run()
	}
}

func (r *Roster) run(ctx context.Context, cancel context.CancelFunc, w *worker, b Backend, dir string) {
	defer r.wg.Done()
	defer cancel()
	r.mu.Lock()
	done := w.done
	job := Job{ID: w.info.ID, Label: w.info.Label, Tier: w.info.Tier, Brief: w.info.Brief, Dir: dir}
	iso, wantIso := w.iso, w.wantIso
	r.mu.Unlock()
	if wantIso && iso == nil {
		var err error
		if iso, err = addWorktree(r.cfg.StateDir, dir, w.info.Label, w.info.ID); err != nil {
			r.finish(w, Outcome{}, fmt.Errorf("making its worktree: %w", err))
			r.release(done)
			return
		}
		r.mu.Lock()
		w.iso = iso
		w.info.Branch, w.info.Worktree = iso.branch, iso.dir
		r.mu.Unlock()
	}
	if iso != nil {
		job.Dir = iso.cwd()
	}
	job.Activity = func() {
		r.mu.Lock()
		w.info.LastActivity = time.Now()
		r.mu.Unlock()
	}
	tctx, tcancel := context.WithTimeout(ctx, w.timeout)
	out, err := b.Run(tctx, job)
	if tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.mu.Lock()
		w.reason = TimedOut
		r.mu.Unlock()
	}
	tcancel()
	if iso != nil {
		commits, files, stat := iso.report()
		kept := iso.cleanup()
		r.mu.Lock()
		w.info.Commits, w.info.FilesChanged, w.info.Diffstat = commits, files, stat
		if !kept {
			w.iso, w.info.Worktree, w.info.Branch = nil, "", ""
		}
		r.mu.Unlock()
	}
	r.finish(w, out, err)
	r.release(done)
}

// release frees a run's slot and starts the next queued run.
func (r *Roster) release(done chan struct{}) {
	r.mu.Lock()
	r.running--
	r.dispatchLocked()
	r.mu.Unlock()
	close(done)
}

// finish records a run's end.
func (r *Roster) finish(w *worker, out Outcome, err error) {
	// The result file is written before the lock is taken: a run's number
	// changes only after its done channel closes, which is after this.
	r.mu.Lock()
	run := w.info.Runs
	r.mu.Unlock()
	resultFile := ""
	if out.Result != "" {
		p := filepath.Join(r.cfg.StateDir, fmt.Sprintf("%s-run%d.result.txt", w.info.ID, run))
		if writeWhole(p, []byte(out.Result)) == nil {
			resultFile = p
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	code := out.ExitCode
	w.info.Ended = time.Now()
	switch {
	case w.reason == Killed:
		w.info.Status = Killed
	case w.reason == TimedOut:
		w.info.Status, w.info.Why = TimedOut, fmt.Sprintf("the time limit (%s) ran out; the result is its output so far", w.timeout)
	case err != nil:
		w.info.Status, w.info.Why = Failed, err.Error()
	case out.Vanished:
		w.info.Status, w.info.Why = Lost, "its process died of a signal this run did not send"
	case code != 0:
		w.info.Status, w.info.Why = Failed, fmt.Sprintf("exit status %d", code)
	case !out.Final:
		w.info.Status, w.info.Why = Failed, "it ended without a final result"
	default:
		w.info.Status = Succeeded
	}
	if err == nil && code >= 0 && !w.info.Started.IsZero() {
		w.info.ExitCode = &code
	}
	w.info.Usage = out.Usage
	if w.info.Status == Failed || w.info.Status == Lost || w.info.Status == TimedOut {
		w.info.Stderr = out.Stderr
	}
	w.info.Result = out.Result
	w.info.ResultFile = resultFile
	// Cut only a result whose whole text is on disk.
	if rs := []rune(out.Result); resultFile != "" && len(rs) > r.cfg.ResultChars {
		w.info.Result, w.info.Truncated = string(rs[:r.cfg.ResultChars]), true
	}
	w.unread = true
	r.logLocked(w, "ended")
	r.changedLocked()
	if r.cfg.Finished != nil {
		info := w.info
		go r.cfg.Finished(info)
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
// returns the worker (r.mu held again) and whether a run was stopped.
func (r *Roster) halt(id string) (*worker, bool, error) {
	r.mu.Lock()
	w, err := r.lookupLocked(id)
	if err != nil {
		r.mu.Unlock()
		return nil, false, err
	}
	stopped := false
	if !w.info.Status.Finished() {
		stopped = true
		w.reason = Killed
		w.cancel()
	}
	done := w.done
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	return w, stopped, nil
}

// Kill stops a worker and returns it with its partial output; killing a
// finished worker changes nothing.
func (r *Roster) Kill(id string) (Info, error) {
	w, _, err := r.halt(id)
	if err != nil {
		return Info{}, err
	}
	defer r.mu.Unlock()
	w.unread = false
	return w.info, nil
}

// Send appends message to the worker's brief and runs it again, stopping
// a running one first (restarted says so).
func (r *Roster) Send(id, message string) (info Info, restarted bool, err error) {
	if strings.TrimSpace(message) == "" {
		return Info{}, false, errors.New("the message is empty")
	}
	w, restarted, err := r.halt(id)
	if err != nil {
		return Info{}, false, err
	}
	defer r.mu.Unlock()
	if r.closed {
		return Info{}, restarted, errors.New("the run is closing: no new runs")
	}
	w.info.Brief += "\n\n" + message
	r.startLocked(w, r.cfg.Backends[w.info.Tier], r.cfg.Dir)
	return w.info, restarted, nil
}

// WaitRequest is what vibe_wait asks for.
type WaitRequest struct {
	IDs   []string
	Label string
	All   bool // every one finished (else any)
	// Timeout bounds the wait; the workers are never stopped by it.
	Timeout  time.Duration
	Progress func(finished, total int)
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
	if len(ids) == 0 {
		ids = slices.Clone(r.order)
	}
	if len(ids) == 0 {
		r.mu.Unlock()
		return nil, nil, errors.New("there are no workers to wait for (vibe_spawn starts one)")
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
	last := -1
	for {
		r.mu.Lock()
		done, pending = done[:0], pending[:0]
		for _, id := range ids {
			if w := r.ws[id]; w.info.Status.Finished() {
				done = append(done, w.info)
			} else {
				pending = append(pending, id)
			}
		}
		ok := len(done) == len(ids) || !req.All && len(done) > 0
		changed := r.changed
		if ok {
			for _, d := range done {
				r.ws[d.ID].unread = false
			}
		}
		r.mu.Unlock()
		if req.Progress != nil && len(done) != last {
			last = len(done)
			req.Progress(len(done), len(ids))
		}
		if ok {
			return done, pending, nil
		}
		select {
		case <-changed:
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
	defer r.mu.Unlock()
	for _, d := range infos {
		r.ws[d.ID].unread = false
	}
}

// List returns every worker, in spawn order.
func (r *Roster) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Info, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.ws[id].info)
	}
	return out
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

// Close stops every worker and waits for them.
func (r *Roster) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for _, w := range r.ws {
		if !w.info.Status.Finished() {
			w.reason = Killed
		}
	}
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	return r.journal.Close()
}

// writeWhole writes a file by a temporary file and a rename, so a reader
// never sees part of it.
func writeWhole(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
