package atomicfile

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Every read-modify-write of a file — edit, apply_patch, resolve,
// lsp_rename, write — holds that file's lock from before it reads until
// after it renames, so two tools changing one file in parallel both land.
// The table is per process: two runs over one root share it.
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
// deadlock. It waits until ctx ends. The returned function releases them.
func Lock(ctx context.Context, paths ...string) (func(), error) {
	keys := slices.Clone(paths)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var releaseHeld func()
	held := make([]*fileLock, 0, len(keys))
	var once sync.Once
	release := func() { once.Do(releaseHeld) }
	releaseHeld = func() {
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
	return release, nil
}
