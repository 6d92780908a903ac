package vibe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
	"github.com/builtin-tools/builtin-tools/vibe/statedir"
	"github.com/builtin-tools/builtin-tools/vibe/worktree"
)

// The journal is one record per worker, workers/<id>/worker.json in the
// state folder, written whole (a temporary file and a rename) whenever the
// worker's status changes and when its result is read. A record names the
// process whose roster keeps the worker (proc.Owner()); Close releases the
// records it keeps (owner ""). New takes over, under a lock on the state
// folder, the released records and those of processes that no longer run:
// a worker that was queued or running there is lost, its output so far is
// its result, and its worktree is reported (or removed when it holds
// nothing). Records are written outside the roster's lock; a write that
// fails is tried again with the next change and the next answer, and
// Problems says why until it succeeds. What a closing roster keeps is in
// closing.go; the folder itself, its ids and locks, is package
// vibe/statedir's.

type record struct {
	Owner        string         `json:"owner"`
	Info         Info           `json:"info"`
	Unread       bool           `json:"unread"`
	Timeout      time.Duration  `json:"timeout"`
	Dir          string         `json:"dir"`
	Gate         runner.Gate    `json:"gate"`
	WantWorktree bool           `json:"want_worktree,omitempty"`
	Worktree     *worktree.Tree `json:"worktree,omitempty"`
	Written      time.Time      `json:"written"`
}

const recordName = "worker.json"

func ownerName() string { return proc.Owner() }

// pidOf is the process id in an owner string.
func pidOf(owner string) string {
	if i := strings.LastIndexByte(owner, '-'); i >= 0 {
		return owner[i+1:]
	}
	return owner
}

// journal writes the workers' records. It shares the roster's lock (mu):
// the workers' fields a record is made of change under it, and the change
// is marked dirty in the same hold, so a flush never misses one.
type journal struct {
	mu     *sync.Mutex // the roster's; it guards dirty, jerr, released, notices and kept
	folder statedir.Folder
	owner  string // proc.Owner(): the process whose records these are
	// dirty are the workers whose records must be written again; jerr is
	// why the last write failed.
	dirty    map[string]*worker
	jerr     error
	flushMu  sync.Mutex // one flush at a time, so an older record never overwrites a newer
	released bool       // Close released the records: written with no owner
	notices  []string   // said once, by the next Problems
	kept     []Kept     // what Close left in the state folder
}

// markLocked notes that w's record must be written. mu is held.
func (j *journal) markLocked(w *worker) { j.dirty[w.info.ID] = w }

func (j *journal) recordLocked(w *worker) record {
	owner := j.owner
	if j.released {
		owner = ""
	}
	return record{Owner: owner, Info: w.info, Unread: w.unread, Timeout: w.timeout, Dir: w.dir, Gate: w.gate,
		WantWorktree: w.wantIso, Worktree: w.iso, Written: time.Now().UTC()}
}

// Flush writes the records that changed (again, for those that failed),
// outside mu; the ones that fail stay marked for the next flush. It
// returns why the journal could not be written, nil when it is whole.
func (j *journal) Flush() error {
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	j.mu.Lock()
	ws := make([]*worker, 0, len(j.dirty))
	recs := make([]record, 0, len(j.dirty))
	for _, w := range j.dirty {
		ws, recs = append(ws, w), append(recs, j.recordLocked(w))
	}
	clear(j.dirty)
	j.mu.Unlock()
	var failed []*worker
	var ferr error
	for i, rec := range recs {
		b, err := json.MarshalIndent(rec, "", "\t")
		if err == nil {
			err = j.writeRecord(rec.Info.ID, b)
		}
		if err != nil {
			failed, ferr = append(failed, ws[i]), err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range failed {
		j.dirty[w.info.ID] = w
	}
	switch {
	case len(j.dirty) == 0:
		j.jerr = nil
	case ferr != nil:
		j.jerr = ferr
	}
	return j.jerr
}

func (j *journal) writeRecord(id string, b []byte) error {
	path := filepath.Join(j.folder.WorkerDir(id), recordName)
	err := statedir.WriteWhole(path, b)
	if err != nil && errors.Is(err, os.ErrNotExist) {
		if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
			err = statedir.WriteWhole(path, b)
		}
	}
	return err
}

// Problems says what an answer must report about the state folder: a
// journal that cannot be written (until it can), and once each, anything
// that kept this roster from taking over earlier workers.
func (j *journal) Problems() []string {
	var out []string
	if err := j.Flush(); err != nil {
		n := 0
		j.mu.Lock()
		n = len(j.dirty)
		j.mu.Unlock()
		out = append(out, fmt.Sprintf("the records of %d workers could not be written to %s (%v); they are kept in memory and written again with every answer, but a restart of this process would lose them", n, j.folder, err))
	}
	j.mu.Lock()
	out = append(out, j.notices...)
	j.notices = nil
	j.mu.Unlock()
	return out
}

// closeRecords removes the records of workers whose results were read and
// that hold no worktree, and releases the others for the next roster,
// noting in kept which and why. ws are all the roster's workers, in
// spawn order, none running.
func (j *journal) closeRecords(ws []*worker) error {
	j.mu.Lock()
	j.released = true
	var gone []string
	for _, w := range ws {
		id := w.info.ID
		hasTree := w.iso != nil && w.iso.Exists()
		if w.info.Status.Finished() && !w.unread && !hasTree {
			gone = append(gone, id)
			delete(j.dirty, id)
			continue
		}
		j.dirty[id] = w
		j.kept = append(j.kept, Kept{Info: w.info, Why: keptWhy(w.info, w.unread || !w.info.Status.Finished(), hasTree)})
	}
	j.mu.Unlock()
	for _, id := range gone {
		os.RemoveAll(j.folder.WorkerDir(id))
	}
	return j.Flush()
}

// adopt reads the state folder: ids go on after the highest given there
// (its last-id, or a worker's folder), and
// the workers of released records and of processes that no longer run
// become this roster's.
func (r *Roster) adopt() error {
	dir := filepath.Join(r.cfg.StateDir, "workers")
	unlock, lerr := statedir.Lock(r.cfg.StateDir, 10*time.Second)
	if lerr != nil {
		r.notices = append(r.notices, fmt.Sprintf("workers left in %s by earlier processes were not taken over: its lock could not be taken (%v)", r.cfg.StateDir, lerr))
	} else {
		defer unlock()
	}
	r.ids.Taken(statedir.LastID(r.cfg.StateDir))
	ents, _ := os.ReadDir(dir)
	var taken []*worker
	for _, e := range ents {
		n := statedir.IDNumber(e.Name())
		if n == 0 || !e.IsDir() {
			continue
		}
		r.ids.Taken(n)
		if lerr != nil {
			continue
		}
		b, rerr := os.ReadFile(filepath.Join(dir, e.Name(), recordName))
		if rerr != nil {
			continue // a spawn in flight elsewhere, or a folder never written
		}
		var rec record
		if json.Unmarshal(b, &rec) != nil || rec.Info.ID != e.Name() {
			r.notices = append(r.notices, fmt.Sprintf("the record of %s in %s cannot be read; it is left as it is", e.Name(), r.cfg.StateDir))
			continue
		}
		if rec.Owner != "" && !proc.OwnerGone(rec.Owner) {
			continue // its process runs: its roster keeps it
		}
		taken = append(taken, r.takeOver(rec))
	}
	sort.Slice(taken, func(i, j int) bool { return statedir.IDNumber(taken[i].info.ID) < statedir.IDNumber(taken[j].info.ID) })
	if text := adoptedText(taken); text != "" {
		r.notices = append(r.notices, text)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range taken {
		r.ws[w.info.ID] = w
		r.order = append(r.order, w.info.ID)
		r.markLocked(w)
	}
	return nil
}

// takeOver makes a worker of an earlier process's record: finished as it
// was, or lost with its output so far when it was still queued or running.
func (r *Roster) takeOver(rec record) *worker {
	w := &worker{info: rec.Info, timeout: rec.Timeout, gate: rec.Gate, dir: rec.Dir, wantIso: rec.WantWorktree, iso: rec.Worktree, unread: rec.Unread}
	done := make(chan struct{})
	close(done)
	w.done, w.cancel = done, func() {}
	if w.dir == "" {
		w.dir = r.cfg.Dir
	}
	if w.timeout <= 0 {
		w.timeout = r.cfg.Timeout
	}
	id := w.info.ID
	if rec.Owner != "" {
		w.info.From = "process " + pidOf(rec.Owner) + ", which no longer runs"
	} else {
		w.info.From = "an earlier run, which closed"
	}
	if !w.info.Status.Finished() {
		started := w.info.Status == Running
		w.info.Status, w.info.Ended, w.unread = Lost, rec.Written, true
		who := "the run that started it"
		if rec.Owner != "" {
			who = "the process that ran it (pid " + pidOf(rec.Owner) + ")"
		}
		if started {
			w.info.Why = who + " ended before it did; the result is its output so far"
		} else {
			w.info.Why = who + " ended before it started"
		}
		part, final := r.folder.PartPath(id, w.info.Runs), r.folder.ResultPath(id, w.info.Runs)
		// Its last output is the last sign of life anyone saw.
		if fi, err := os.Stat(part); err == nil && fi.ModTime().After(w.info.Ended) {
			w.info.Ended = fi.ModTime()
		}
		if w.info.Ended.After(w.info.LastActivity) {
			w.info.LastActivity = w.info.Ended
		}
		if head, size, err := statedir.ReadHead(part, r.headBytes()); err == nil {
			res := statedir.Output{Head: statedir.ValidPrefix(head), Whole: size <= int64(len(head)), Bytes: size}
			if size == 0 {
				os.Remove(part)
			} else if os.Rename(part, final) == nil {
				res.File = final
			}
			r.setResultLocked(w, res)
		}
		if w.iso != nil && w.iso.Exists() {
			w.info.Commits, w.info.FilesChanged, w.info.Diffstat = w.iso.Report()
			if !w.iso.Cleanup() {
				w.iso, w.info.Worktree, w.info.Branch = nil, "", ""
			}
		}
	}
	if w.iso != nil && !w.iso.Exists() {
		w.iso, w.info.Worktree = nil, ""
	}
	// Temporary files of a write the dead process never finished.
	if names, _ := filepath.Glob(filepath.Join(r.folder.WorkerDir(id), ".tmp-*")); len(names) > 0 {
		for _, n := range names {
			os.Remove(n)
		}
	}
	return w
}
