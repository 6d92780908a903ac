package vibe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// A root's state folder holds work only while it holds a record: a
// worker's unread result, or a worktree with commits or changes. Every
// roster over the folder holds a shared lock on its "users" file for its
// life; the last one to close, finding no record left, empties the folder
// down to the highest worker id given (last-id, so that no id names two
// workers over the root, issue 26) and the root's name (it takes the lock
// exclusively, so a roster that is starting waits and then sees that the
// file it locked was removed, and makes the folder's files again). Close lists what stays and why (Kept); the next roster over the
// folder says it again in its first answer (Problems).

const usersName = "users"

// useFolder takes the shared lock that says a roster uses dir, making the
// folder as needed; it returns the locked file, nil when the lock cannot
// be had (then the folder is never removed by this roster).
func useFolder(dir string, wait time.Duration) *os.File {
	deadline := time.Now().Add(wait)
	for {
		if os.MkdirAll(filepath.Join(dir, "workers"), 0o700) != nil {
			return nil
		}
		path := filepath.Join(dir, usersName)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
			if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			f.Close()
			return nil
		}
		if sameFile(f, path) {
			return f
		}
		// The last roster removed the folder while this one waited.
		f.Close()
	}
}

// sameFile says whether path still names the open file f.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// removeIdleFolder empties the state folder, but for its last id and the
// root's name, when no roster uses it and no record is left in it. users
// is this roster's locked file.
func removeIdleFolder(dir string, users *os.File) {
	path := filepath.Join(dir, usersName)
	// Asking for the lock exclusively on the file already held shared
	// converts it: it succeeds only when no other roster holds it.
	if syscall.Flock(int(users.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || !sameFile(users, path) {
		return
	}
	unlock, err := lockFolder(dir, 10*time.Second)
	if err != nil {
		return
	}
	defer unlock()
	if ents, err := os.ReadDir(filepath.Join(dir, "workers")); err != nil || len(ents) > 0 {
		return
	}
	for _, name := range []string{"workers", "worktrees", "lock"} {
		os.Remove(filepath.Join(dir, name)) // a folder that is not empty stays
	}
	// Last, so that a roster waiting for the lock sees the file go.
	os.Remove(path)
	if readLastID(dir) == 0 {
		os.Remove(filepath.Join(dir, rootName))
		os.Remove(dir)
	}
}

// rootName is the file that names the folder's root, for a person looking.
const rootName = "root"

func writeRootName(dir, root string) {
	p := filepath.Join(dir, rootName)
	if b, err := os.ReadFile(p); err != nil || string(b) != root+"\n" {
		os.WriteFile(p, []byte(root+"\n"), 0o600)
	}
}

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
