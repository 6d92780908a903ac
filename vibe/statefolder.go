package vibe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stateFolder is a roster's state folder (Config.StateDir): a folder per
// worker, workers/<id>, holds its record (journal.go) and each run's
// output and result.
type stateFolder string

func (f stateFolder) workerDir(id string) string { return filepath.Join(string(f), "workers", id) }

func (f stateFolder) partPath(id string, run int) string {
	return filepath.Join(f.workerDir(id), fmt.Sprintf("run%d.output.part", run))
}

func (f stateFolder) resultPath(id string, run int) string {
	return filepath.Join(f.workerDir(id), fmt.Sprintf("run%d.result.txt", run))
}

// ids gives the worker ids of a state folder. Its lock is its own: an id
// is taken before the roster's lock, under the folder's.
type ids struct {
	folder stateFolder
	mu     sync.Mutex
	next   int // the highest id number taken; mu
}

// newID takes the next free id: its folder is made with O_EXCL semantics
// (mkdir), so rosters of two processes over one state folder never take
// the same one, and the highest id given is kept in the folder (lastID),
// so an id is never given again over this root, also once the worker's
// record is gone (issue 26).
func (s *ids) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := string(s.folder)
	if unlock, err := lockFolder(dir, 10*time.Second); err == nil {
		defer unlock()
	}
	s.next = max(s.next, readLastID(dir))
	for tries := 0; ; tries++ {
		s.next++
		id := "w" + strconv.Itoa(s.next)
		err := os.Mkdir(s.folder.workerDir(id), 0o700)
		if err == nil || !errors.Is(err, os.ErrExist) || tries > 10000 {
			// A state folder that cannot be written still gets workers;
			// the journal's error says their records are only in memory.
			writeWhole(filepath.Join(dir, lastIDName), []byte(strconv.Itoa(s.next)+"\n"))
			return id
		}
	}
}

// lastIDName is the state folder's file that holds the number of the
// highest worker id given over its root.
const lastIDName = "last-id"

func readLastID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, lastIDName))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// idNumber is N for a worker id "wN", 0 for anything else.
func idNumber(id string) int {
	if !strings.HasPrefix(id, "w") {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
