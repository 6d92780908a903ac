// Package index is the code graph's index of one root: it walks the tree,
// reads every file in a supported language through astgrep's queries
// into a record (graph/lang, graph/record), publishes what it holds as an immutable
// snapshot (graph/snap) after each change, keeps it fresh (re-reading
// what a write changed, or what graph/index/ondisk's stamps and watcher
// say changed) and keeps a copy of the records
// in the graph store on disk. It holds no resolution: queries read its
// snapshots.
package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/index/ondisk"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
	"github.com/builtin-tools/builtin-tools/graph/store"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Options configure an index.
type Options struct {
	// MaxBytes bounds the memory the index's records take (estimated);
	// files past it are named as not indexed. Default 400 MiB.
	MaxBytes int64
	// MaxFileSize skips larger files. Default astgrep's (2 MiB).
	MaxFileSize int64
	// QueryDirs are folders of extra language folders (language.json and
	// tags.scm), read after the bundled ones.
	QueryDirs []string
	// GrammarDirs are astgrep's folders of run-time grammar libraries.
	GrammarDirs []string
	// StoreDir, when set, is the graph store (graph/store) the index
	// keeps its files' records in, by content, with a manifest of the
	// root: a new process over the same tree, another worktree of it or a
	// copy parses only the files whose bytes no record has. "": records
	// are kept in memory only.
	StoreDir string
	// StoreBytes bounds the store's size on disk (store.Options.MaxBytes);
	// 0 is store.DefaultMaxBytes.
	StoreBytes int64
}

// DefaultMaxBytes is the index's memory bound unless Options say otherwise.
const DefaultMaxBytes = 400 << 20

// Index is the code graph of one root: every file in a supported language,
// its definitions, references and imports. It is safe for concurrent use:
// the build and refreshes make the next snapshot (snap.Builder) under the
// index's lock and publish it whole; a query takes the published snapshot
// (Snapshot) and takes no lock while it reads it.
type Index struct {
	root  string
	guard *pathguard.Guard
	eng   *astgrep.Engine
	langs *lang.Set
	opts  Options

	cur atomic.Pointer[snap.Snapshot] // the published snapshot

	// mu is the writers' lock: the builder, the folders and manifests
	// walked, the watcher and the counters. No query holds it while it
	// resolves.
	mu        sync.RWMutex
	b         *snap.Builder
	published time.Time         // when the builder last published
	looked    atomic.Bool       // a snapshot was taken since then (publishEvery)
	dirs      map[string]int64  // folders walked, with their mtime
	modAt     map[string]string // a manifest's (go.mod's) folder → module path
	watch     *ondisk.Watcher   // nil: every Sync checks every stamp
	watchNote string            // why there is no watcher
	swept     bool              // a full stamp check ran after the build
	syncMu    sync.Mutex        // one Sync at a time
	// reading numbers each re-reading of a file begun outside the build
	// (rel → the latest one's number, readSeq the last number given): of
	// two readings of one file at once, the one begun last is kept.
	reading map[string]uint64
	readSeq uint64

	bg refresher // the files Sync left to the background (refresher.go)

	quotes quoteCache // files' lines answers quote (quote.go)

	buildOnce sync.Once
	ready     chan struct{}
	total     int // files the build found
	done      int // files the build finished
	started   time.Time
	took      time.Duration
	buildErr  error
	cancel    context.CancelFunc
	ctx       context.Context
	progress  func(done, total int)
	refreshed int // files re-read by freshness checks since the build

	st          *store.Store // nil: records are kept in memory only
	setKey      store.Key    // the languages' fingerprint: the manifest's key with the root
	hadManifest bool         // the build found the root's manifest
	byManifest  int          // files the build took by their manifest stamps, unread
	manifestAt  int          // refreshed when the manifest was last written
	manifestDue *time.Timer  // a manifest write after refreshes, pending
	manifestRun sync.WaitGroup
	fromStore   atomic.Int64  // files whose record came from the store, not a parse
	parsed      atomic.Int64  // files parsed
	saved       chan struct{} // closed when the build's goroutine is done
}

// New makes an index over the guard's root, every file read through it.
// Nothing is read until Start.
func New(g *pathguard.Guard, eng *astgrep.Engine, opts Options) (*Index, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: an index needs the path guard of its root", pathguard.ErrNoPath)
	}
	root := g.Root()
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = astgrep.DefaultMaxFileSize
	}
	langs, err := lang.Load(eng, opts.QueryDirs...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &Index{root: root, guard: g, eng: eng, langs: langs, opts: opts, b: snap.New(langs), dirs: map[string]int64{},
		ready: make(chan struct{}), saved: make(chan struct{}), ctx: ctx, cancel: cancel, modAt: map[string]string{},
		reading: map[string]uint64{}}
	x.bg = refresher{x: x, queuedSet: map[string]bool{}, inflight: map[string]int{}}
	x.cur.Store(x.b.Snapshot())
	if opts.StoreDir != "" {
		x.st = store.Open(opts.StoreDir, store.Options{MaxBytes: opts.StoreBytes})
	}
	if w, err := ondisk.NewWatcher(); err == nil {
		x.watch = w
	} else {
		x.watchNote = err.Error()
	}
	return x, nil
}

// watchDir adds a folder to the watcher; past the system's limit the
// watcher is dropped and every query checks every file instead. x.mu is
// held.
func (x *Index) watchDir(rel, abs string) {
	if x.watch == nil {
		return
	}
	if err := x.watch.Add(rel, abs); err != nil {
		x.watch.Close()
		x.watch = nil
		x.watchNote = "inotify: " + err.Error() + " (raise fs.inotify.max_user_watches)"
	}
}

// Close stops a build in progress, and writes the root's manifest again
// when files were re-read since it was written.
func (x *Index) Close() {
	x.cancel()
	x.buildOnce.Do(func() {
		close(x.ready)
		close(x.saved)
	})
	<-x.saved
	x.bg.stop()
	x.mu.Lock()
	if x.manifestDue != nil && x.manifestDue.Stop() {
		x.manifestRun.Done()
	}
	x.manifestDue = nil
	x.mu.Unlock()
	x.manifestRun.Wait()
	x.mu.RLock()
	stale := x.buildErr == nil && !x.started.IsZero() && x.refreshed != x.manifestAt
	x.mu.RUnlock()
	if stale {
		x.writeManifest()
	}
	x.mu.Lock()
	if x.watch != nil {
		x.watch.Close()
	}
	x.mu.Unlock()
}

// Languages returns the languages the index knows.
func (x *Index) Languages() *lang.Set { return x.langs }

// Root returns the folder indexed.
func (x *Index) Root() string { return x.root }

// Start begins the build in the background, once; progress (may be nil)
// is told how far it got.
func (x *Index) Start(progress func(done, total int)) {
	x.buildOnce.Do(func() {
		x.mu.Lock()
		x.started = time.Now()
		x.progress = progress
		x.mu.Unlock()
		go func() {
			defer close(x.saved)
			err := x.build(x.ctx)
			x.mu.Lock()
			x.buildErr = err
			x.took = time.Since(x.started)
			x.mu.Unlock()
			close(x.ready)
			// The manifest is written after the index is ready: queries do
			// not wait for it. One that named every file unchanged stands.
			x.mu.RLock()
			write := err == nil && (!x.hadManifest || x.byManifest != x.total)
			x.mu.RUnlock()
			if write {
				x.writeManifest()
			}
		}()
	})
}

// Wait waits up to d for the build to finish and says whether it did.
func (x *Index) Wait(ctx context.Context, d time.Duration) bool {
	return lifetime.Await(ctx, x.ready, d)
}

// Ready says whether the build has finished.
func (x *Index) Ready() bool { return lifetime.Ended(x.ready) }

func (x *Index) walkOpts() walk.Options {
	return walk.Options{
		MaxFileSize: x.opts.MaxFileSize,
		Dirs:        true,
		Want: func(name string) bool {
			return x.langs.ForFile(name) != nil || x.langs.Manifest(name) != nil
		},
	}
}

func (x *Index) build(ctx context.Context) error {
	// The languages' fingerprints (a hash of each grammar's tables) are
	// made while the tree is walked.
	keyed := make(chan struct{})
	if x.st != nil {
		go func() {
			defer close(keyed)
			x.setKey = x.langs.Fingerprint()
		}()
		defer func() { <-keyed }()
	}
	var found []walk.Entry
	err := walk.Walk(ctx, x.guard, x.root, x.walkOpts(), func(e walk.Entry) error {
		found = append(found, e)
		return nil
	})
	if err != nil {
		return err
	}
	files := x.admit(found)
	x.mu.Lock()
	x.total = len(files)
	x.mu.Unlock()
	if x.st != nil {
		<-keyed
		files = x.fromManifest(ctx, files)
	}
	return x.capture(ctx, files, true, false)
}

// admit records the folders and manifests (go.mod) of a walk and returns the
// files to (re)index.
func (x *Index) admit(found []walk.Entry) []walk.Entry {
	x.mu.Lock()
	defer x.mu.Unlock()
	var files []walk.Entry
	for _, e := range found {
		switch {
		case e.Dir:
			if _, known := x.dirs[e.Rel]; !known {
				x.watchDir(e.Rel, e.Abs)
			}
			x.dirs[e.Rel] = dirMtime(x.guard, e.Abs)
		case x.langs.Manifest(path.Base(e.Rel)) != nil:
			x.readManifest(e)
		case e.TooLarge:
			x.b.Skip(e.Rel, tooLarge(x.opts.MaxFileSize))
		default:
			files = append(files, e)
		}
	}
	if _, known := x.dirs["."]; !known {
		x.watchDir(".", x.root)
	}
	x.dirs["."] = dirMtime(x.guard, x.root)
	x.publish()
	return files
}

func dirMtime(g *pathguard.Guard, abs string) int64 {
	st, err := g.Lstat(abs)
	if err != nil {
		return 0
	}
	return st.ModTime().UnixNano()
}

// readManifest records the module path a manifest declares for its
// folder, by its language's import rule.
func (x *Index) readManifest(e walk.Entry) {
	x.b.SetModules(readManifest(x.guard, x.langs, x.modAt, e))
}

// readManifest records in modAt the module path the manifest e declares
// for its folder, and returns every module so recorded, longest path
// first (nested modules win).
func readManifest(g *pathguard.Guard, langs *lang.Set, modAt map[string]string, e walk.Entry) []imports.Module {
	dir := path.Dir(e.Rel)
	delete(modAt, dir)
	if data, _, err := g.ReadFile(e.Abs, 1<<20); err == nil {
		if m := langs.Manifest(path.Base(e.Rel)).ModulePath(data); m != "" {
			modAt[dir] = m
		}
	}
	var mods []imports.Module
	for d, m := range modAt {
		mods = append(mods, imports.Module{Path: m, Dir: d})
	}
	sort.Slice(mods, func(i, j int) bool {
		if len(mods[i].Path) != len(mods[j].Path) {
			return len(mods[i].Path) > len(mods[j].Path)
		}
		return mods[i].Dir < mods[j].Dir
	})
	return mods
}

// capture reads and extracts files and puts them in the index.
func (x *Index) capture(ctx context.Context, entries []walk.Entry, counting, oneAtATime bool) error {
	var seq map[string]uint64 // this re-reading's number of each file
	if !counting {
		seq = make(map[string]uint64, len(entries))
		x.mu.Lock()
		for _, e := range entries {
			x.readSeq++
			x.reading[e.Rel], seq[e.Rel] = x.readSeq, x.readSeq
		}
		x.mu.Unlock()
		defer func() {
			x.mu.Lock()
			for rel, n := range seq {
				if x.reading[rel] == n {
					delete(x.reading, rel)
				}
			}
			x.mu.Unlock()
		}()
	}
	lastNote := time.Now()
	err := x.read(ctx, entries, oneAtATime, func(rel string, f *snap.Entry, rerr error) {
		x.mu.Lock()
		switch {
		case counting && x.b.Entry(rel) != nil:
			// A refresh after a write put a newer reading while the build
			// was on its way to this file.
		case !counting && x.reading[rel] != seq[rel]:
			// A reading of the file begun after this one (a write's
			// Refresh, the refresher) has the newer bytes, or the file
			// was dropped meanwhile.
		case f != nil:
			x.put(f)
		default:
			x.b.Remove(rel)
			x.b.Skip(rel, rerr.Error())
		}
		var note func(int, int)
		if counting {
			x.done++
			if x.progress != nil && (time.Since(lastNote) > 250*time.Millisecond || x.done == x.total) {
				lastNote = time.Now()
				note = x.progress
			}
		}
		// A long batch (the build) is published as it goes, so queries
		// that do not wait for it see what is read so far.
		if time.Since(x.published) > publishEvery(counting && !x.looked.Load(), x.started) {
			x.publish()
		}
		done, total := x.done, x.total
		x.mu.Unlock()
		if note != nil {
			note(done, total)
		}
	})
	x.mu.Lock()
	x.publish()
	x.mu.Unlock()
	return err
}

// read reads files (in astgrep's work slots), takes each one's record
// from the store by its bytes' key or parses and extracts it (and stores
// the record), calling fn with each file's entry, or the error that kept
// it from being read. oneAtATime reads one file at a time (the
// refresher's workers), else as many as the engine's workers.
func (x *Index) read(ctx context.Context, entries []walk.Entry, oneAtATime bool, fn func(rel string, f *snap.Entry, err error)) error {
	type entry struct {
		rel    string
		l      *lang.Language
		sum    [32]byte // the bytes' SHA-256, when hashed is set
		hashed bool
	}
	cf := make([]astgrep.CaptureFile, 0, len(entries))
	of := make(map[string]*entry, len(entries))
	for _, e := range entries {
		l := x.langs.ForFile(e.Rel)
		if l == nil {
			continue
		}
		en := &entry{rel: e.Rel, l: l}
		c := astgrep.CaptureFile{Path: e.Abs, Query: l.Query(), Info: e.Info}
		if x.st != nil && l.Keyed() {
			// Want and the result of one file run in turn on one worker.
			c.Want = func(src []byte, info fs.FileInfo) bool {
				en.sum, en.hashed = sha256.Sum256(src), true
				rec := x.getRecord(l.RecordKey(en.sum))
				if rec == nil {
					return true
				}
				fn(en.rel, entryOf(en.rel, l, en.sum, rec, info, len(src)), nil)
				return false
			}
		}
		cf = append(cf, c)
		of[e.Abs] = en
	}
	capture := x.eng.CaptureTrees // Extract runs the query over each tree, collecting no list
	if oneAtATime {
		capture = func(ctx context.Context, g *pathguard.Guard, cf []astgrep.CaptureFile, fn func(*astgrep.CaptureResult)) error {
			for i := range cf {
				if err := x.eng.CaptureTrees(ctx, g, cf[i:i+1], fn); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return capture(ctx, x.guard, cf, func(r *astgrep.CaptureResult) {
		en := of[r.File.Path]
		var f *snap.Entry
		if r.Err == nil {
			if !en.hashed {
				en.sum = sha256.Sum256(r.Src)
			}
			rec := en.l.Extractor().Extract(r.Src, r)
			x.parsed.Add(1)
			x.putRecord(en.l, en.sum, rec)
			f = entryOf(en.rel, en.l, en.sum, rec, r.Info, len(r.Src))
		}
		fn(en.rel, f, r.Err)
	})
}

// publish makes what the builder holds the snapshot queries read. x.mu
// is held.
func (x *Index) publish() {
	x.cur.Store(x.b.Snapshot())
	x.published = time.Now()
	x.looked.Store(false)
}

// publishEvery is how long a batch of files goes unpublished: 250 ms,
// or during a build begun at started while no query took a snapshot
// since the last publish (quiet), a quarter of the build's time so far.
// Each publish makes the builder copy the shards and lists it writes
// next, a cost that grows with the index: at a fixed interval a build's
// cost would grow faster than its files.
func publishEvery(quiet bool, started time.Time) time.Duration {
	const every = 250 * time.Millisecond
	if !quiet {
		return every
	}
	return max(every, time.Since(started)/4)
}

// Snapshot is the index as last published: immutable, read with no lock.
func (x *Index) Snapshot() *snap.Snapshot {
	if !x.looked.Load() {
		x.looked.Store(true)
	}
	return x.cur.Load()
}

// put replaces the record of f.Rel with f, within the memory bound. x.mu
// is held.
func (x *Index) put(f *snap.Entry) { putWithin(x.b, f, x.opts.MaxBytes) }

func putWithin(b *snap.Builder, f *snap.Entry, max int64) {
	var had int64
	if old := b.Entry(f.Rel); old != nil {
		had = old.Cost()
	}
	if b.Bytes()-had+f.Cost() > max {
		b.Remove(f.Rel)
		b.Skip(f.Rel, fmt.Sprintf("not indexed: the index reached its memory bound (%d MiB)", max>>20))
		return
	}
	// Put replaces a file in place: the generations the resolver's caches
	// are kept by (ModGen, ImportsGen, BasesGen) move only if what they
	// follow changed, where a remove and a put would move them all.
	b.Put(f)
}

// Refresh re-reads files (absolute paths) now: the registry calls it after
// a write, so the next query sees the write. Files outside the root or in
// no supported language are ignored; deleted ones are dropped.
func (x *Index) Refresh(ctx context.Context, abs ...string) error {
	return x.refresh(ctx, abs, false)
}

// refresh is Refresh, reading one file at a time when oneAtATime is set.
func (x *Index) refresh(ctx context.Context, abs []string, oneAtATime bool) error {
	var entries []walk.Entry
	gone := map[string]string{} // files to drop, and why they are not indexed ("": no reason to say)
	for _, a := range abs {
		rel, err := filepath.Rel(x.root, a)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		if x.langs.ForFile(rel) == nil {
			continue
		}
		info, err := x.guard.Lstat(a)
		if err != nil || !info.Mode().IsRegular() || walk.Excluded(x.guard, a, false, x.walkOpts()) {
			gone[rel] = ""
			continue
		}
		if info.Size() > x.opts.MaxFileSize {
			gone[rel] = tooLarge(x.opts.MaxFileSize)
			continue
		}
		entries = append(entries, walk.Entry{Abs: a, Rel: rel, Info: info})
	}
	x.mu.Lock()
	for rel, why := range gone {
		delete(x.reading, rel) // a reading of it under way is stale
		x.b.Remove(rel)
		if why == "" {
			x.b.Unskip(rel)
		} else {
			x.b.Skip(rel, why)
		}
	}
	x.refreshed += len(entries)
	if len(entries) == 0 {
		x.publish()
	} else {
		x.manifestLater()
	}
	x.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	return x.capture(ctx, entries, false, oneAtATime)
}

// syncNow is how many changed files Sync re-reads before it returns: the
// rest go to the background refresher, and answers say how many are
// still pending (State.Pending), so a query never waits behind a large
// change made outside the tools (a checkout, a generator).
const syncNow = 16

// Sync notices files changed on disk by anything else since they were
// indexed (by size, modification time and inode), and folders whose
// entries changed; it re-reads up to syncNow changed files and drops the
// deleted ones now, and queues the other changed files for the background
// refresher. It returns how many files it re-read or dropped.
func (x *Index) Sync(ctx context.Context) (int, error) {
	if !x.Ready() {
		return 0, nil
	}
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	x.mu.RLock()
	w, swept := x.watch, x.swept
	x.mu.RUnlock()
	if w != nil && swept {
		files, dirs, lost := w.Drain()
		if !lost {
			changed, dirs := x.fromEvents(files, dirs)
			return x.catchUp(ctx, changed, dirs)
		}
	} else if w != nil {
		w.Drain() // the full check below covers what is queued
	}
	n, err := x.sweep(ctx)
	if err == nil {
		x.mu.Lock()
		x.swept = true
		x.mu.Unlock()
	}
	return n, err
}

// fromEvents returns the files the watcher named whose stamps changed,
// and the folders to list again (those it named, and those of manifests
// it named), as absolute paths.
func (x *Index) fromEvents(files, dirs []string) (changed, rewalk []string) {
	s := x.Snapshot()
	for _, rel := range files {
		abs := filepath.Join(x.root, filepath.FromSlash(rel))
		if x.langs.Manifest(path.Base(rel)) != nil {
			dirs = append(dirs, path.Dir(rel))
			continue
		}
		if x.langs.ForFile(rel) == nil {
			continue
		}
		f := s.Entry(rel)
		st, err := x.guard.Lstat(abs)
		if f != nil && err == nil && ondisk.Unchanged(f, st) {
			continue // already read (a write through the registry)
		}
		changed = append(changed, abs)
	}
	for _, d := range dirs {
		rewalk = append(rewalk, filepath.Join(x.root, filepath.FromSlash(d)))
	}
	return changed, rewalk
}

// sweep checks every file's stamp and every folder's modification time,
// and catches up with what changed.
func (x *Index) sweep(ctx context.Context) (int, error) {
	x.mu.RLock()
	dirs := make(map[string]int64, len(x.dirs))
	for d, m := range x.dirs {
		dirs[d] = m
	}
	x.mu.RUnlock()
	var changed []string
	x.Snapshot().Each(func(f *snap.Entry) bool {
		abs := filepath.Join(x.root, filepath.FromSlash(f.Rel))
		st, err := x.guard.Lstat(abs)
		if err != nil || !ondisk.Unchanged(f, st) {
			changed = append(changed, abs)
		}
		return true
	})
	var rewalk []string
	for d, m := range dirs {
		abs := filepath.Join(x.root, filepath.FromSlash(d))
		if dirMtime(x.guard, abs) != m {
			rewalk = append(rewalk, abs)
		}
	}
	return x.catchUp(ctx, changed, rewalk)
}

// catchUp lists the folders again, then re-reads the changed files and
// those new in the folders, up to syncNow of them now, the rest in the
// background.
func (x *Index) catchUp(ctx context.Context, changed, dirs []string) (int, error) {
	n := 0
	for _, d := range dirs {
		added, dropped, err := x.rewalk(ctx, d)
		n += dropped
		if err != nil {
			return n, err
		}
		changed = append(changed, added...)
	}
	now := x.bg.split(changed)
	return n + len(now), x.Refresh(ctx, now...)
}

// rewalk lists one folder again (its new subfolders in full), drops the
// files gone from it or from its gone subfolders, and returns the files it
// did not know (to read) and how many it dropped.
func (x *Index) rewalk(ctx context.Context, abs string) ([]string, int, error) {
	rel, _ := filepath.Rel(x.root, abs)
	rel = filepath.ToSlash(rel)
	var found []walk.Entry
	if _, err := x.guard.Lstat(abs); err == nil {
		opts := x.walkOpts()
		opts.MaxDepth = 1
		err := walk.Walk(ctx, x.guard, abs, opts, func(e walk.Entry) error {
			found = append(found, e)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, 0, err
		}
	}
	x.mu.RLock()
	var fresh []walk.Entry
	for _, e := range found {
		if _, known := x.dirs[e.Rel]; e.Dir && !known && e.Rel != rel {
			fresh = append(fresh, e)
		}
	}
	x.mu.RUnlock()
	for _, d := range fresh {
		err := walk.Walk(ctx, x.guard, d.Abs, x.walkOpts(), func(e walk.Entry) error {
			found = append(found, e)
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	files := x.admit(found)
	under := func(p string) bool { return rel == "." || p == rel || strings.HasPrefix(p, rel+"/") }
	var todo []string
	var gone []string
	x.mu.Lock()
	for _, e := range files {
		if x.b.Entry(e.Rel) == nil {
			todo = append(todo, e.Abs)
		}
	}
	x.b.Each(func(f *snap.Entry) bool {
		if under(f.Dir) {
			if _, err := x.guard.Lstat(filepath.Join(x.root, filepath.FromSlash(f.Rel))); err != nil {
				gone = append(gone, f.Rel)
			}
		}
		return true
	})
	for _, r := range gone {
		delete(x.reading, r)
		x.b.Remove(r)
	}
	x.publish()
	for d := range x.dirs {
		if under(d) && d != "." {
			if _, err := x.guard.Lstat(filepath.Join(x.root, filepath.FromSlash(d))); err != nil {
				delete(x.dirs, d)
			}
		}
	}
	x.mu.Unlock()
	return todo, len(gone), nil
}

// Started says whether Start was called.
func (x *Index) Started() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return !x.started.IsZero()
}

// Progress says how many files the build has finished of those it found.
func (x *Index) Progress() (done, total int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.done, x.total
}

// Flush waits until the build, and the manifest it writes, are done.
func (x *Index) Flush(ctx context.Context) {
	select {
	case <-x.saved:
	case <-ctx.Done():
	}
}

// ProgressText says how far the build is, for a reader.
func (x *Index) ProgressText() string {
	done, total := x.Progress()
	if total == 0 {
		return "still listing the files"
	}
	return fmt.Sprintf("%d of %d files indexed so far", done, total)
}

// State is how complete the index is: whether the build is done, and how
// far it got.
type State struct {
	Ready       bool
	Done, Total int // files the build finished, of those it found
	// Pending counts the files changed outside the tools that the
	// background refresher has still to re-read.
	Pending int
}

// State says how complete the index is now. Read it before Snapshot: a
// ready state then goes with a complete snapshot.
func (x *Index) State() State {
	ready := x.Ready()
	done, total := x.Progress()
	return State{Ready: ready, Done: done, Total: total, Pending: int(x.bg.pending.Load())}
}

// Stats are what status says of the index beyond its snapshot.
type Stats struct {
	Root      string
	Found     int           // files the build found
	Took      time.Duration // the build, once ready
	Refreshed int           // files re-read by writes and freshness checks since the build
	// FromStore counts the files whose record came from the graph store
	// instead of a parse, Parsed those parsed, since the index was made.
	FromStore, Parsed int
	// Watching says changes are noticed by file events; else every
	// query checks every file's stamp, WatchNote saying why.
	Watching  bool
	WatchNote string
	// StoreError says why records are not read from or written to the
	// store (it cannot be used, or a write failed): the index works in
	// memory all the same.
	StoreError string
	// BuildError is why the build stopped short (the walk failed).
	BuildError string
}

// Stats says what status says of the index.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := Stats{Root: x.root, Found: x.total, Took: x.took, Refreshed: x.refreshed, FromStore: int(x.fromStore.Load()), Parsed: int(x.parsed.Load()),
		Watching: x.watch != nil, WatchNote: x.watchNote}
	if x.st != nil {
		if s := x.st.Status(); s.Reason != "" {
			st.StoreError = s.Reason
		} else {
			st.StoreError = s.LastErr
		}
	}
	if x.buildErr != nil && !errors.Is(x.buildErr, context.Canceled) {
		st.BuildError = x.buildErr.Error()
	}
	return st
}

// ReadFile reads a file of the root (rel to it) through the index's
// guard, within its size bound: the lines an answer quotes.
func (x *Index) ReadFile(rel string) ([]byte, error) {
	data, _, err := x.guard.ReadFile(filepath.Join(x.root, filepath.FromSlash(rel)), x.opts.MaxFileSize)
	return data, err
}

// tooLarge says why a file over the size bound is not indexed.
func tooLarge(max int64) string { return fmt.Sprintf("larger than %d bytes", max) }
