//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// The instance names this system's boot and PID namespace, so a process
// id read from a name (a temporary file's, a folder's, a tag) is only
// compared with running processes when it was made where they run: two
// containers sharing a checkout or /tmp never take each other's live
// files for a dead process's.
var instance = sync.OnceValue(func() string {
	boot := "0"
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		boot = strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
		if len(boot) > 8 {
			boot = boot[:8]
		}
	}
	ns := "0"
	if l, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		// "pid:[4026531836]"
		if i, j := strings.IndexByte(l, '['), strings.IndexByte(l, ']'); i >= 0 && j > i {
			ns = l[i+1 : j]
		}
	}
	if boot == "0" && ns == "0" {
		// No /proc (macOS): the host name stands in.
		h, _ := os.Hostname()
		boot = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, strings.ToLower(h))
	}
	return boot + "-" + ns
})

// Instance names where this process runs (boot and PID namespace); see
// [Owner].
func Instance() string { return instance() }

// Owner is the name a file or folder carries so that a later sweep can
// tell whether its maker still runs: the instance and this process's id.
func Owner() string { return instance() + "-" + strconv.Itoa(os.Getpid()) }

// OwnerGone reports whether an owner string from [Owner] names a process
// of this instance that no longer runs. Owners of other instances are never
// gone: they cannot be checked from here.
func OwnerGone(owner string) bool {
	i := strings.LastIndexByte(owner, '-')
	if i < 0 || owner[:i] != instance() {
		return false
	}
	pid, err := strconv.Atoi(owner[i+1:])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return !Running(pid)
}

// Running reports whether a process with this id exists.
func Running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// The tag every child carries in its environment: this process's prefix
// and the child's number.
const tagVar = "BUILTIN_TOOLS_PROC"

var tagSeq atomic.Int64

func tagPrefix() string { return strings.ReplaceAll(Owner(), "-", "_") + "_" }

func newTag() string { return tagPrefix() + strconv.FormatInt(tagSeq.Add(1), 10) }

// withoutTag drops an inherited tag (this process may itself be a child of
// another builtin-tools).
func withoutTag(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, tagVar+"=") {
			out = append(out, e)
		}
	}
	return out
}

var (
	dirMu  sync.Mutex
	dirSet string
)

const dirPrefix = "builtin-tools-"

// processDir is this process's temporary folder, where every family's
// temporary files live; "" until TempDir made it.
func processDir() string {
	dirMu.Lock()
	defer dirMu.Unlock()
	return dirSet
}

// TempDir makes a new folder for a family's temporary files (a kernel's
// driver, a debug build, a server's state) inside this process's own
// temporary folder, which the reaper removes when this process ends,
// however it ends. The first call also removes the folders of dead
// processes of this instance.
func TempDir(prefix string) (string, error) {
	dirMu.Lock()
	if dirSet == "" {
		d, err := makeProcessDir()
		if err != nil {
			dirMu.Unlock()
			return "", err
		}
		dirSet = d
		dirMu.Unlock()
		reap.folder(d)
		go sweepDirs(filepath.Dir(d))
	} else {
		dirMu.Unlock()
	}
	return os.MkdirTemp(processDir(), prefix)
}

func makeProcessDir() (string, error) {
	base := os.TempDir()
	d := filepath.Join(base, dirPrefix+Owner())
	if err := os.Mkdir(d, 0o700); err == nil {
		return d, nil
	} else if !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making this process's temporary folder: %w", err)
	}
	// Left by an earlier process with our id, or planted: use it only if
	// it is a real folder of ours.
	if fi, err := os.Lstat(d); err == nil && fi.IsDir() && fi.Mode().Perm() == 0o700 && ownedByUs(fi) {
		return d, nil
	}
	return os.MkdirTemp(base, dirPrefix+Owner()+"-")
}

// sweepDirs removes the temporary folders of processes of this instance
// that no longer run (SIGKILL'd before their reaper ran, or whose reaper
// was killed too).
func sweepDirs(base string) {
	names, _ := os.ReadDir(base)
	for _, e := range names {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, dirPrefix) {
			continue
		}
		owner := strings.TrimPrefix(name, dirPrefix)
		if i := strings.LastIndexByte(owner, '-'); i > 0 && strings.Count(owner, "-") > 2 {
			owner = owner[:i] // the MkdirTemp suffix
		}
		if !OwnerGone(owner) {
			continue
		}
		p := filepath.Join(base, name)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && ownedByUs(fi) {
			os.RemoveAll(p)
		}
	}
}

func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
