package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Every read-modify-write of a file — edit, apply_patch, resolve,
// lsp_rename, write — holds that file's lock from before it reads until
// after it renames, so two tools changing one file in parallel both land.
//
// The lock has two parts. Within the process, a table keyed by path (two
// runs over one root share it). Across processes, an advisory lock
// (flock(2)) on the file's folder, which every builtin-tools process takes
// the same way: the folder rather than the file, because the file is
// replaced by a rename (a lock on it would stay with the old inode) and may
// not exist yet, and rather than a lock file, which would be left behind by
// a crash and show in git status. Another program does not take it; the
// commit's checks (the victim of the rename compared with what was read)
// cover that case.
var locks = struct {
	mu sync.Mutex
	m  map[string]*fileLock
}{m: map[string]*fileLock{}}

type fileLock struct {
	ch   chan struct{} // holds a token while locked
	refs int           // holders and waiters
}

// Lock takes the locks of paths (absolute, resolved; duplicates are
// fine) in sorted order, so that calls locking overlapping sets cannot
// deadlock, then the folder locks other processes see, also in sorted
// order. It waits until ctx ends. The returned function releases them.
func Lock(ctx context.Context, paths ...string) (func(), error) {
	keys := slices.Clone(paths)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var releaseHeld func()
	held := make([]*fileLock, 0, len(keys))
	var dirs []int // folder descriptors holding flocks
	var once sync.Once
	release := func() { once.Do(releaseHeld) }
	releaseHeld = func() {
		for _, fd := range dirs {
			unix.Close(fd) // releases the flock
		}
		for i := len(held) - 1; i >= 0; i-- {
			<-held[i].ch
		}
		locks.mu.Lock()
		for i, k := range keys[:len(held)] {
			if held[i].refs--; held[i].refs == 0 {
				delete(locks.m, k)
			}
		}
		locks.mu.Unlock()
	}
	for _, k := range keys {
		locks.mu.Lock()
		l := locks.m[k]
		if l == nil {
			l = &fileLock{ch: make(chan struct{}, 1)}
			locks.m[k] = l
		}
		l.refs++
		locks.mu.Unlock()
		select {
		case l.ch <- struct{}{}:
			held = append(held, l)
		case <-ctx.Done():
			locks.mu.Lock()
			if l.refs--; l.refs == 0 {
				delete(locks.m, k)
			}
			locks.mu.Unlock()
			release()
			return nil, fmt.Errorf("gave up waiting for another call writing %s: %w", k, ctx.Err())
		}
	}
	for _, dir := range lockDirs(keys) {
		fd, err := flockDir(ctx, dir)
		if err != nil {
			release()
			return nil, fmt.Errorf("gave up waiting for another process writing in %s: %w", dir, err)
		}
		if fd >= 0 {
			dirs = append(dirs, fd)
		}
	}
	return release, nil
}

// lockDirs returns the folders whose locks cover paths, sorted and without
// repeats: each file's folder, or for a file in folders yet to be made, the
// nearest folder above it that exists.
func lockDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		d := filepath.Dir(p)
		for {
			var st unix.Stat_t
			if err := unix.Lstat(d, &st); err == nil || !errors.Is(err, unix.ENOENT) || d == filepath.Dir(d) {
				break
			}
			d = filepath.Dir(d)
		}
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// flockDir takes the advisory lock on the folder dir and returns the
// descriptor holding it, or -1 when dir is gone or cannot be opened (there
// is then nothing to lock; the commit's checks still hold). After the lock
// is granted the path must still name the locked folder; if the folder was
// replaced meanwhile, the lock is taken again on the new one.
func flockDir(ctx context.Context, dir string) (int, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, nil
		}
		if err := waitFlock(ctx, fd); err != nil {
			return -1, err
		}
		var held, now unix.Stat_t
		if unix.Fstat(fd, &held) == nil && unix.Stat(dir, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino {
			return fd, nil
		}
		unix.Close(fd)
	}
}

// MaxLockWait bounds how long a write waits for another process's lock on
// a folder: a writer stopped mid-write (SIGSTOP, a debugger) must not hold
// every other writer there forever.
var MaxLockWait = 30 * time.Second

// waitFlock takes an exclusive flock on fd, waiting until ctx ends or
// MaxLockWait passes. It polls (flock cannot be interrupted, and a thread
// blocked in it would outlive a cancelled call). On error fd is closed.
func waitFlock(ctx context.Context, fd int) error {
	deadline := time.Now().Add(MaxLockWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			unix.Close(fd)
			return err
		}
		if time.Now().After(deadline) {
			unix.Close(fd)
			return fmt.Errorf("another process has held the lock for %s (a writer stopped or slow); nothing was written, try again", MaxLockWait)
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}
