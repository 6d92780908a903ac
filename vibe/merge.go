package vibe

import (
	"errors"
	"fmt"

	"github.com/builtin-tools/builtin-tools/vibe/worktree"
)

// vibe_merge: a finished worktree worker's branch brought into the root's
// current branch by worktree.Tree.Merge, one merge per worker at a time.

// MergeRequest is what vibe_merge asks for.
type MergeRequest struct {
	ID string
	// CherryPick replays the worker's commits one by one instead of a
	// merge commit (or a fast-forward when the root has not moved).
	CherryPick bool
	// Keep keeps the worktree and branch after a clean merge.
	Keep bool
}

// MergeResult is what a merge did, and the worker after it.
type MergeResult struct {
	Worker Info
	worktree.Merged
}

// Merge brings a finished worktree worker's commits into the root's
// current branch.
func (r *Roster) Merge(req MergeRequest) (MergeResult, error) {
	r.mu.Lock()
	w, err := r.lookupLocked(req.ID)
	if err != nil {
		r.mu.Unlock()
		return MergeResult{}, err
	}
	switch {
	case !w.info.Status.Finished():
		r.mu.Unlock()
		return MergeResult{}, fmt.Errorf("%s is %s: vibe_wait for it to end (or vibe_kill it), then merge", w.info.ID, w.info.Status)
	case !w.wantIso:
		r.mu.Unlock()
		return MergeResult{}, fmt.Errorf("%s did not run in a worktree (vibe_spawn started it with isolation none): its changes are in the root already, and there is no branch to merge", w.info.ID)
	case w.iso == nil || !w.iso.Exists():
		r.mu.Unlock()
		return MergeResult{}, fmt.Errorf("%s has no worktree any more (it was removed with its branch: it held no commits or changes, or was merged already), so there is nothing to merge", w.info.ID)
	case w.merging:
		r.mu.Unlock()
		return MergeResult{}, fmt.Errorf("%s is being merged by another call", w.info.ID)
	}
	w.merging = true
	iso := *w.iso
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		w.merging = false
		r.mu.Unlock()
	}()
	merged, err := iso.Merge(req.CherryPick, req.Keep)
	if err != nil {
		var ce *worktree.ConflictError
		if errors.As(err, &ce) {
			ce.ID = req.ID
		}
		return MergeResult{}, err
	}
	res := MergeResult{Merged: merged}
	r.mu.Lock()
	if res.Removed {
		w.iso, w.info.Worktree, w.info.Branch = nil, "", ""
		r.markLocked(w)
	}
	res.Worker = w.info
	r.mu.Unlock()
	r.Flush()
	return res, nil
}
