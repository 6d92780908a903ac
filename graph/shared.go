package graph

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Runs in one process over the same root share one index: the first
// Acquire makes it (with its own path guard and engine, so it outlives the
// run that made it), later ones take a reference, and the last Release
// stops its build and drops it.

var shared struct {
	mu sync.Mutex
	m  map[string]*sharedIndex
}

type sharedIndex struct {
	w    *Viewer
	refs int
	g    *pathguard.Guard
	e    *astgrep.Engine
}

// Handle is one run's reference to a shared index. It does not embed the
// index: closing one run's handle must not stop the index the other runs of
// the process share.
type Handle struct {
	w    *Viewer
	e    *astgrep.Engine // the index's, for parsing versions held in memory
	key  string
	once sync.Once
	// views counts View calls: an answer takes one (a test checks it).
	views atomic.Int64
}

// Index is the shared index: start it, wait for it, sync and refresh it.
// Never close it: Release (or Close) the handle.
func (h *Handle) Index() *index.Index { return h.w.x }

// View is the index as a query reads it now, with the resolver's cache
// the process's runs share (Viewer.View). A query takes one view and
// keeps to it.
func (h *Handle) View(synced int) View {
	h.views.Add(1)
	return h.w.View(synced)
}

// Views counts the views the handle has given.
func (h *Handle) Views() int64 { return h.views.Load() }

// Close releases the handle, as Release does.
func (h *Handle) Close() error {
	h.Release()
	return nil
}

func sharedKey(root string, opts Options) string {
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s\x00%s\x00%s\x00%d", root, opts.MaxBytes, opts.MaxFileSize,
		strings.Join(opts.QueryDirs, "\x00"), strings.Join(opts.GrammarDirs, "\x00"), opts.StoreDir, opts.StoreBytes)
}

// Acquire returns the process's index of the root of g (a run's guard) for
// opts, making it if no run holds one. The index reads through a guard of
// its own for that root, since it outlives the run that made it. Nothing is
// read until its Start.
func Acquire(rg *pathguard.Guard, opts Options) (*Handle, error) {
	if rg == nil {
		return nil, fmt.Errorf("%w: an index needs the run's path guard", pathguard.ErrNoPath)
	}
	root := rg.Root()
	opts.QueryDirs = slices.Clone(opts.QueryDirs)
	key := sharedKey(root, opts)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if s := shared.m[key]; s != nil {
		s.refs++
		return &Handle{w: s.w, e: s.e, key: key}, nil
	}
	g, err := pathguard.New(root)
	if err != nil {
		return nil, err
	}
	e := astgrep.NewEngine(astgrep.Options{GrammarDirs: opts.GrammarDirs, MaxFileSize: opts.MaxFileSize})
	x, err := index.New(g, e, opts)
	if err != nil {
		e.Close()
		g.Close()
		return nil, err
	}
	if shared.m == nil {
		shared.m = map[string]*sharedIndex{}
	}
	w := NewViewer(x)
	shared.m[key] = &sharedIndex{w: w, refs: 1, g: g, e: e}
	return &Handle{w: w, e: e, key: key}, nil
}

// Release gives the reference back; the last one closes the index.
func (h *Handle) Release() {
	h.once.Do(func() {
		shared.mu.Lock()
		s := shared.m[h.key]
		s.refs--
		last := s.refs == 0
		if last {
			delete(shared.m, h.key)
		}
		shared.mu.Unlock()
		if last {
			s.w.x.Close()
			s.e.Close()
			s.g.Close()
		}
	})
}
