package store

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SweepStats says what a sweep found and removed.
type SweepStats struct {
	Skipped          bool // another process was sweeping
	Manifests        int  // manifests found
	ManifestsRemoved int  // least recently used ones past the bound, and damaged ones
	Records          int
	RecordsRemoved   int // named by no kept manifest and older than Options.Grace
	TmpRemoved       int // temporary files of writers that died
	Bytes            int64
	BytesAfter       int64 // on disk, before and after
}

// SweepDue reports whether no process of this store has swept in the last
// SweepEvery: the index calls Sweep, in the background, after writing its
// manifest when it is.
func (s *Store) SweepDue() bool {
	if s.canWrite() != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(s.dir, "sweep.lock"))
	return err != nil || time.Since(fi.ModTime()) > SweepEvery
}

type sweepFile struct {
	path  string
	size  int64 // blocks on disk
	mtime time.Time
}

type sweepManifest struct {
	sweepFile
	keys []Key
}

// Sweep bounds the store to Options.MaxBytes: it keeps the most recently
// used manifests, newest first, with their records while they fit in 80 %
// of the bound (so the next sweep is not due at once), removes the other
// manifests, then removes the records no kept manifest names once they
// are older than Options.Grace (a build writes its records before its
// manifest), and temporary files older than an hour. Only one process
// sweeps at a time; another returns Skipped. A record removed under a
// reader is a miss there. Files the store did not name are never
// touched.
func (s *Store) Sweep() (SweepStats, error) {
	var st SweepStats
	if err := s.canWrite(); err != nil {
		return st, err
	}
	lock := filepath.Join(s.dir, "sweep.lock")
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return st, s.failed(err)
	}
	defer f.Close() // releases the lock
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			st.Skipped = true
			return st, nil
		}
		return st, err
	}
	now := time.Now()
	os.Chtimes(lock, now, now)

	records := s.listRecords()
	manifests := s.listManifests(&st, now)
	st.Records, st.Manifests = len(records), len(manifests)
	for _, r := range records {
		st.Bytes += r.size
	}
	for _, m := range manifests {
		st.Bytes += m.size
	}

	slices.SortFunc(manifests, func(a, b sweepManifest) int { return b.mtime.Compare(a.mtime) })
	limit := int64(float64(s.opts.MaxBytes) * keepShare)
	keep := map[Key]bool{}
	kept, full := int64(0), false
	for _, m := range manifests {
		add, mine := m.size, map[Key]bool{}
		for _, k := range m.keys {
			if r, ok := records[k]; ok && !keep[k] && !mine[k] {
				add += r.size
				mine[k] = true
			}
		}
		if !full && kept+add <= limit {
			kept += add
			st.BytesAfter += m.size
			for k := range mine {
				keep[k] = true
			}
			continue
		}
		// Least recently used from here on, unless it was used since it
		// was listed.
		full = true
		if fi, err := os.Stat(m.path); err == nil && fi.ModTime().Equal(m.mtime) && os.Remove(m.path) == nil {
			st.ManifestsRemoved++
			continue
		}
		st.BytesAfter += m.size
	}
	for k, r := range records {
		if keep[k] || now.Sub(r.mtime) <= s.opts.Grace {
			continue
		}
		if os.Remove(r.path) == nil {
			st.RecordsRemoved++
			delete(records, k)
		}
	}
	if es, err := os.ReadDir(filepath.Join(s.dir, "tmp")); err == nil {
		for _, e := range es {
			if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".tmp") && now.Sub(fi.ModTime()) > tmpGrace &&
				os.Remove(filepath.Join(s.dir, "tmp", e.Name())) == nil {
				st.TmpRemoved++
			}
		}
	}
	for _, r := range records {
		st.BytesAfter += r.size
	}
	return st, nil
}

// usage is a file's size on disk (its blocks), which is what the bound
// is about; a small record takes a whole block.
func usage(fi fs.FileInfo) int64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Blocks > 0 {
		return sys.Blocks * 512
	}
	return fi.Size()
}

// listRecords finds the record files: records/ab/<64 hex starting ab>.
func (s *Store) listRecords() map[Key]sweepFile {
	out := map[Key]sweepFile{}
	top := filepath.Join(s.dir, "records")
	dirs, _ := os.ReadDir(top)
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 || !isHex(d.Name()) {
			continue
		}
		es, _ := os.ReadDir(filepath.Join(top, d.Name()))
		for _, e := range es {
			var k Key
			if n := e.Name(); len(n) != 64 || n[:2] != d.Name() || !isHex(n) || hexInto(k[:], n) != nil {
				continue
			}
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out[k] = sweepFile{path: filepath.Join(top, d.Name(), e.Name()), size: usage(fi), mtime: fi.ModTime()}
		}
	}
	return out
}

// listManifests reads every manifest's keys. With st, a damaged manifest
// older than a minute is removed (and counted).
func (s *Store) listManifests(st *SweepStats, now time.Time) []sweepManifest {
	top := filepath.Join(s.dir, "manifests")
	es, _ := os.ReadDir(top)
	var out []sweepManifest
	for _, e := range es {
		n := e.Name()
		if len(n) != 18 || !strings.HasSuffix(n, ".m") || !isHex(n[:16]) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(top, n)
		m := sweepManifest{sweepFile: sweepFile{path: path, size: usage(fi), mtime: fi.ModTime()}}
		keys, ok := manifestKeys(path, n[:16])
		if !ok {
			if st != nil && now.Sub(fi.ModTime()) > badGrace && os.Remove(path) == nil {
				st.ManifestsRemoved++
			}
			continue
		}
		m.keys = keys
		out = append(out, m)
	}
	return out
}

// manifestKeys reads a manifest file whose root is not known yet: the id
// in its header must begin with its name's 16 hex and be the id of the
// root and language set it holds.
func manifestKeys(path, name string) ([]Key, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < len(manifestMagic)+len(Key{}) {
		return nil, false
	}
	id := Key(b[len(manifestMagic):])
	if hex.EncodeToString(id[:8]) != name {
		return nil, false
	}
	p, err := parse(b, manifestMagic, id)
	if err != nil {
		return nil, false
	}
	var m Manifest
	if m.UnmarshalBinary(p) != nil || m.Validate() != nil {
		return nil, false
	}
	if want, _ := manifestID(m.Root, m.Set); want != id {
		return nil, false
	}
	keys := make([]Key, len(m.Files))
	for i, f := range m.Files {
		keys[i] = f.Key
	}
	return keys, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func hexInto(dst []byte, s string) error {
	_, err := hex.Decode(dst, []byte(s))
	return err
}
