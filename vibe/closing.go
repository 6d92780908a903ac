package vibe

import (
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// A root's state folder holds work only while it holds a record: a
// worker's unread result, or a worktree with commits or changes; the last
// roster over a folder with no record left empties it (statedir.RemoveIdle).
// Close lists what stays and why (Kept); the next roster over the folder
// says it again in its first answer (Problems).

// Kept is a worker whose record Close left in the state folder, and why.
type Kept struct {
	Info Info
	Why  string
}

// Kept lists what Close left in the state folder: workers with an unread
// result or a worktree that holds work. Empty before Close.
func (j *journal) Kept() []Kept {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Kept(nil), j.kept...)
}

// KeptText says what Close kept and why, "" when it kept nothing.
func KeptText(kept []Kept) string {
	if len(kept) == 0 {
		return ""
	}
	var parts []string
	for _, k := range kept {
		parts = append(parts, fmt.Sprintf("%s %q (%s): %s", k.Info.ID, k.Info.Label, k.Info.Status, k.Why))
	}
	return fmt.Sprintf("the run closed and kept %s of vibe workers, which hold work: %s. "+
		"The next run over this root lists them (vibe_list) and gives their results (vibe_wait); "+
		"a worktree stays until it is removed: merge its branch if it is wanted, then git worktree remove --force DIR and git branch -D BRANCH",
		textcut.Count(len(kept), "record", "records"), strings.Join(parts, "; "))
}

// keptWhy says what work a worker's record holds, "" for none.
func keptWhy(in Info, unread, worktree bool) string {
	var why []string
	if unread {
		why = append(why, "its result was not read")
	}
	if worktree {
		why = append(why, worktreeWork(in))
	}
	return strings.Join(why, ", and ")
}

func worktreeWork(in Info) string {
	return fmt.Sprintf("its worktree %s (branch %s) holds %s and %s changed", in.Worktree, in.Branch,
		textcut.Count(in.Commits, "commit", "commits"), textcut.Count(len(in.FilesChanged), "file", "files"))
}

// adoptedText says, for the first answer of a roster, which worktrees that
// hold work it took over from earlier runs; "" for none.
func adoptedText(ws []*worker) string {
	var parts []string
	for _, w := range ws {
		if w.iso != nil && w.info.Worktree != "" {
			parts = append(parts, fmt.Sprintf("%s %q: %s", w.info.ID, w.info.Label, worktreeWork(w.info)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("earlier runs over this root kept %s, because they hold work: %s. "+
		"Merge a branch if it is wanted, then git worktree remove --force DIR and git branch -D BRANCH; vibe_list shows them",
		textcut.Count(len(parts), "worktree", "worktrees"), strings.Join(parts, "; "))
}
