package index

import (
	"context"
	"io/fs"
	"path"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/graph/index/ondisk"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
	"github.com/builtin-tools/builtin-tools/graph/store"
	"github.com/builtin-tools/builtin-tools/internal/walk"
)

// The index keeps its files' records in a graph store (Options.StoreDir)
// by content: a record's key is the SHA-256 of the file's bytes and of
// everything that shapes extraction (lang.Language.RecordKey), so any
// root, worktree or process of the user that meets the same bytes takes
// the record instead of parsing the file. A root's manifest names each
// file's record with the stamp it had: a warm start trusts a file whose
// stamp matches without reading it, reads and hashes every other file,
// and parses only those whose key the store does not have.

// entryOf makes the entry of a file of l at rel whose bytes (size long,
// their SHA-256 sum) gave rec.
func entryOf(rel string, l *lang.Language, sum [32]byte, rec *record.Record, info fs.FileInfo, size int) *snap.Entry {
	f := &snap.Entry{Rel: rel, Dir: path.Dir(rel), Lang: l, Content: sum, Record: rec}
	if info != nil {
		f.Stamp = ondisk.Stamp(info)
	}
	f.Stamp.Size = int64(size)
	return f
}

// getRecord returns the stored record of key, or nil; a payload that does
// not decode is rejected, so the next Put of the key rewrites it.
func (x *Index) getRecord(key [32]byte) *record.Record {
	p, ok := x.st.Get(key)
	if !ok {
		return nil
	}
	rec, err := record.Decode(p)
	if err != nil {
		x.st.Reject(key)
		return nil
	}
	x.fromStore.Add(1)
	return rec
}

// putRecord stores a record just extracted. A write that fails is the
// store's to report (Stats.StoreError); the index goes on in memory.
func (x *Index) putRecord(l *lang.Language, sum [32]byte, rec *record.Record) {
	if x.st == nil || !l.Keyed() {
		return
	}
	b, _ := rec.AppendBinary(nil)
	x.st.Put(l.RecordKey(sum), b)
}

// fromManifest puts in the index every file whose stamp matches the one
// the root's manifest has for it and whose record the store has, and
// returns the other files.
func (x *Index) fromManifest(ctx context.Context, files []walk.Entry) []walk.Entry {
	m, ok := x.st.Manifest(x.root, x.setKey)
	if !ok {
		return files
	}
	x.mu.Lock()
	x.hadManifest = true
	x.mu.Unlock()
	byPath := make(map[string]*store.File, len(m.Files))
	for i := range m.Files {
		byPath[m.Files[i].Path] = &m.Files[i]
	}
	// The records are read and decoded by one worker a core, in chunks
	// taken in path order, while this goroutine puts each chunk decoded
	// into the builder (one at a time, under the lock): the builder's
	// name tables are as much work as the decoding, and now run beside it.
	const chunk = 64
	got := make([]*snap.Entry, len(files))
	done := make([]chan struct{}, (len(files)+chunk-1)/chunk)
	for c := range done {
		done[c] = make(chan struct{})
	}
	var next atomic.Int64
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= len(done) {
					return
				}
				for i := c * chunk; i < min(len(files), (c+1)*chunk) && ctx.Err() == nil; i++ {
					e := files[i]
					mf, l := byPath[e.Rel], x.langs.ForFile(e.Rel)
					if mf == nil || l == nil || !l.Keyed() || mf.Lang != l.ID || e.Info == nil {
						continue
					}
					st := ondisk.Stamp(e.Info)
					if st != (snap.Stamp{Size: mf.Size, ModTime: mf.ModTime, Inode: uint64(mf.Inode), CTime: mf.CTime}) || l.RecordKey(mf.Content) != mf.Key {
						continue
					}
					if rec := x.getRecord(mf.Key); rec != nil {
						got[i] = entryOf(e.Rel, l, mf.Content, rec, e.Info, int(st.Size))
					}
				}
				close(done[c]) // (also when cancelled: nothing waits forever)
			}
		}()
	}
	todo := files[:0:0]
	for c := range done {
		<-done[c]
		x.mu.Lock()
		for i := c * chunk; i < min(len(files), (c+1)*chunk); i++ {
			if got[i] == nil {
				todo = append(todo, files[i])
				continue
			}
			x.put(got[i])
			x.done++
			x.byManifest++
		}
		x.mu.Unlock()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.publish()
	return todo
}

// manifestDelay is how long after a refresh the root's manifest is written
// again: a burst of edits is one write, and a process that is killed loses
// at most that much (a stale manifest costs reading and hashing the files
// it names wrongly, never a wrong record).
var manifestDelay = 5 * time.Second

// manifestLater writes the manifest manifestDelay from now unless a write
// is already due; x.mu is held.
func (x *Index) manifestLater() {
	if x.st == nil || x.manifestDue != nil || x.ctx.Err() != nil {
		return
	}
	x.manifestRun.Add(1)
	x.manifestDue = time.AfterFunc(manifestDelay, func() {
		defer x.manifestRun.Done()
		x.mu.Lock()
		x.manifestDue = nil
		stale := x.buildErr == nil && x.refreshed != x.manifestAt
		x.mu.Unlock()
		select {
		case <-x.saved: // the build and its own manifest are done
		default:
			return
		}
		if stale && x.ctx.Err() == nil {
			x.writeManifest()
		}
	})
}

// writeManifest writes the root's manifest from the published snapshot,
// then bounds the store when no process has lately.
func (x *Index) writeManifest() {
	if x.st == nil {
		return
	}
	m := &store.Manifest{Root: x.root, Set: x.setKey}
	x.mu.Lock()
	x.manifestAt = x.refreshed
	x.mu.Unlock()
	x.Snapshot().Each(func(f *snap.Entry) bool {
		if f.Lang.Keyed() {
			m.Files = append(m.Files, store.File{Path: f.Rel, Lang: f.Lang.ID, Key: f.Lang.RecordKey(f.Content), Content: f.Content,
				Size: f.Stamp.Size, ModTime: f.Stamp.ModTime, Inode: int64(f.Stamp.Inode), CTime: f.Stamp.CTime})
		}
		return true
	})
	if x.st.PutManifest(m) == nil && x.st.SweepDue() {
		x.st.Sweep()
	}
}
