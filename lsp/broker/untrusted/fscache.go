package untrusted

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The checkout rule asks the file system the same questions at every
// start and every hello (where each folder of PATH leads, which managers
// are installed): a process starts few servers, but the broker answers
// every process of the user for its whole life. The answers are kept
// here, each with what shows that it still holds, checked at each use
// with fewer system calls than the question takes.

// maxCached bounds each cache: past it, the cache starts afresh.
const maxCached = 4096

// folderIdentity is a folder as stat sees it: device and inode.
type folderIdentity struct{ dev, ino uint64 }

func identity(p string) (folderIdentity, bool) {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return folderIdentity{}, false
	}
	return folderIdentity{uint64(st.Dev), uint64(st.Ino)}, true
}

// realFolders caches filepath.EvalSymlinks of folders (a root, the
// entries of PATH and the other lists), path → where it leads. An entry
// holds while the path and where it led are still one folder (the same
// device and inode): a folder has one place in the tree, so a link on
// the way retargeted, or a folder moved, removed or replaced, shows as
// another folder (or none) at one of the two, and the path is resolved
// again. Two stats instead of one per component. (A bind mount gives a
// folder a second place; only root makes one, and through it the same
// folder's contents are reached.) A file (a program) is not cached:
// another link to one file can lie elsewhere.
var realFolders = struct {
	sync.Mutex
	m map[string]realFolder
}{m: map[string]realFolder{}}

type realFolder struct {
	real string
	id   folderIdentity
}

// evalSymlinks is filepath.EvalSymlinks, through realFolders.
func evalSymlinks(p string) (string, error) {
	realFolders.Lock()
	e, ok := realFolders.m[p]
	realFolders.Unlock()
	if ok {
		if a, ok := identity(p); ok && a == e.id {
			if b, ok := identity(e.real); ok && b == e.id {
				return e.real, nil
			}
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if id, ok := identity(real); ok {
		realFolders.Lock()
		if len(realFolders.m) >= maxCached {
			clear(realFolders.m)
		}
		realFolders.m[p] = realFolder{real, id}
		realFolders.Unlock()
	}
	return real, nil
}

// pinAnswers caches ManagerPins by the variables it reads. An answer
// holds while every file it looked at is as it was: a folder it searched
// (the entries of PATH, PYENV_ROOT/bin, asdf's plugins) keeps its inode
// and time, which a name added, removed or renamed in it changes; and
// each name it found there (as a file or a link) stats as it did (inode,
// mode, time), which a program made executable or not, or a link's
// target changed, shows; an answer given while a folder had just changed is not
// kept (stamps.racy). A manager installed, removed or replaced is seen at
// the next hello; the check costs a stat per folder and per name found,
// not one per folder and per manager and a read of asdf's plugins.
var pinAnswers = struct {
	sync.Mutex
	m map[string]pinAnswer
}{m: map[string]pinAnswer{}}

type pinAnswer struct {
	pins   []ManagerPin
	stamps stamps
}

// stamp is what stat said of a path.
type stamp struct {
	path     string
	ok       bool
	dev, ino uint64
	mode     os.FileMode
	mtime    time.Time
}

func stampOf(p string) stamp {
	fi, err := os.Stat(p)
	if err != nil {
		return stamp{path: p}
	}
	st := stamp{path: p, ok: true, mode: fi.Mode(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), uint64(sys.Ino)
	}
	return st
}

// stamps records the files an answer depends on.
type stamps struct {
	list []stamp
	// racy is set when a folder changed so lately that a change to come
	// could leave its times as they are (they move by the kernel's clock
	// tick, milliseconds): such an answer is not kept.
	racy bool
}

// racyWindow is how recent a folder's change makes an answer racy: far
// more than a clock tick.
const racyWindow = 2 * time.Second

// folder records dir, searched for names.
func (s *stamps) folder(dir string) {
	st := stampOf(dir)
	if st.ok && time.Since(st.mtime) < racyWindow {
		s.racy = true
	}
	s.list = append(s.list, st)
}

// name records dir/name when it exists (a link, even a broken one,
// included): its absence is the folder's stamp.
func (s *stamps) name(p string) {
	if _, err := os.Lstat(p); err == nil {
		s.list = append(s.list, stampOf(p))
	}
}

func (s *stamps) hold() bool {
	for _, st := range s.list {
		if now := stampOf(st.path); now.ok != st.ok || now.dev != st.dev || now.ino != st.ino || now.mode != st.mode || !now.mtime.Equal(st.mtime) {
			return false
		}
	}
	return true
}

// ManagerPins lists the managers installed in env (a process's
// environment, NAME=value) whose pin variable an untrusted start must
// set: rustup on PATH, pyenv on PATH or in PYENV_ROOT, each asdf plugin.
// The list is shared between calls (pinAnswers): not to be changed.
func ManagerPins(env []string) []ManagerPin {
	get := lookup(env)
	key := strings.Join([]string{get("PATH"), get("HOME"), get("PYENV_ROOT"), get("ASDF_DATA_DIR")}, "\x00")
	pinAnswers.Lock()
	a, ok := pinAnswers.m[key]
	pinAnswers.Unlock()
	if ok && a.stamps.hold() {
		return a.pins
	}
	var st stamps
	pins := managerPins(get, &st)
	if st.racy {
		return pins
	}
	pinAnswers.Lock()
	if len(pinAnswers.m) >= maxCached {
		clear(pinAnswers.m)
	}
	pinAnswers.m[key] = pinAnswer{pins, st}
	pinAnswers.Unlock()
	return pins
}
