// Package statedir is the state folder vibe keeps per root, meant to
// outlive the process: its layout (a folder per worker holding its record
// and each run's output and result), the worker ids given there (never
// given twice over a root), its locks (the folder's own, and the shared one
// each roster over it holds for its life, so the last to close empties
// it), files written whole, and a run's output streamed to its part file
// and renamed to its result when the run ends. It knows nothing of
// workers' records, rosters or tools.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Folder is a roster's state folder (vibe's Config.StateDir): a folder
// per worker, workers/<id>, holds its record and each run's output and
// result.
type Folder string

// WorkerDir is worker id's folder.
func (f Folder) WorkerDir(id string) string { return filepath.Join(string(f), "workers", id) }

// PartPath is the file run's output goes to while it runs.
func (f Folder) PartPath(id string, run int) string {
	return filepath.Join(f.WorkerDir(id), fmt.Sprintf("run%d.output.part", run))
}

// ResultPath is the file run's result is kept in once it ended.
func (f Folder) ResultPath(id string, run int) string {
	return filepath.Join(f.WorkerDir(id), fmt.Sprintf("run%d.result.txt", run))
}

// IDs gives the worker ids of a state folder. Its lock is its own: an id
// is taken before the roster's lock, under the folder's.
type IDs struct {
	Folder Folder
	mu     sync.Mutex
	next   int // the highest id number taken; mu
}

// Taken notes id number n as given (a worker's folder found there): ids
// go on after it.
func (s *IDs) Taken(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = max(s.next, n)
}

// NewID takes the next free id: its folder is made with O_EXCL semantics
// (mkdir), so rosters of two processes over one state folder never take
// the same one, and the highest id given is kept in the folder (LastID),
// so an id is never given again over this root, also once the worker's
// record is gone (issue 26).
func (s *IDs) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := string(s.Folder)
	if unlock, err := Lock(dir, 10*time.Second); err == nil {
		defer unlock()
	}
	s.next = max(s.next, LastID(dir))
	for tries := 0; ; tries++ {
		s.next++
		id := "w" + strconv.Itoa(s.next)
		err := os.Mkdir(s.Folder.WorkerDir(id), 0o700)
		if err == nil || !errors.Is(err, os.ErrExist) || tries > 10000 {
			// A state folder that cannot be written still gets workers;
			// the journal's error says their records are only in memory.
			WriteWhole(filepath.Join(dir, LastIDName), []byte(strconv.Itoa(s.next)+"\n"))
			return id
		}
	}
}

// LastIDName is the state folder's file that holds the number of the
// highest worker id given over its root.
const LastIDName = "last-id"

// LastID is the number of the highest worker id given over dir's root, 0
// for none.
func LastID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, LastIDName))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// IDNumber is N for a worker id "wN", 0 for anything else.
func IDNumber(id string) int {
	if !strings.HasPrefix(id, "w") {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Lock takes an exclusive lock on the state folder, waiting at most
// wait; release it with the returned function.
func Lock(dir string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WriteWhole writes a file by a temporary file and a rename, so a reader
// never sees part of it.
func WriteWhole(path string, data []byte) error {
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

// A root's state folder holds work only while it holds a record: a
// worker's unread result, or a worktree with commits or changes. Every
// roster over the folder holds a shared lock on its "users" file for its
// life (Use); the last one to close, finding no record left, empties the
// folder down to the highest worker id given (last-id, so that no id names
// two workers over the root, issue 26) and the root's name (RemoveIdle takes
// the lock exclusively, so a roster that is starting waits and then sees
// that the file it locked was removed, and makes the folder's files again).

const usersName = "users"

// Use takes the shared lock that says a roster uses dir, making the
// folder as needed; it returns the locked file, nil when the lock cannot
// be had (then the folder is never removed by this roster).
func Use(dir string, wait time.Duration) *os.File {
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

// RemoveIdle empties the state folder, but for its last id and the
// root's name, when no roster uses it and no record is left in it. users
// is this roster's locked file.
func RemoveIdle(dir string, users *os.File) {
	path := filepath.Join(dir, usersName)
	// Asking for the lock exclusively on the file already held shared
	// converts it: it succeeds only when no other roster holds it.
	if syscall.Flock(int(users.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || !sameFile(users, path) {
		return
	}
	unlock, err := Lock(dir, 10*time.Second)
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
	if LastID(dir) == 0 {
		os.Remove(filepath.Join(dir, RootName))
		os.Remove(dir)
	}
}

// RootName is the file that names the folder's root, for a person looking.
const RootName = "root"

// WriteRootName writes the file that names the folder's root.
func WriteRootName(dir, root string) {
	p := filepath.Join(dir, RootName)
	if b, err := os.ReadFile(p); err != nil || string(b) != root+"\n" {
		os.WriteFile(p, []byte(root+"\n"), 0o600)
	}
}
