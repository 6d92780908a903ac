package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func key(i int) Key { return sha256.Sum256([]byte("key " + strconv.Itoa(i))) }

// payload is key i's bytes: up to 40 KiB, so a torn write would show.
func payload(i int) []byte {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	b := make([]byte, rng.IntN(40<<10))
	for j := range b {
		b[j] = byte(rng.Uint32())
	}
	return b
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s := Open(dir, Options{})
	if st := s.Status(); !st.Readable || !st.Writable {
		t.Fatalf("Open(%s): %+v", dir, st)
	}
	return s
}

func mustGet(t *testing.T, s *Store, i int) {
	t.Helper()
	got, ok := s.Get(key(i))
	if !ok || !bytes.Equal(got, payload(i)) {
		t.Fatalf("Get(key %d) = %d bytes, %v; want its %d bytes", i, len(got), ok, len(payload(i)))
	}
}

func TestPutGet(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if _, ok := s.Get(key(1)); ok {
		t.Fatal("a hit in an empty store")
	}
	for i := range 3 {
		if err := s.Put(key(i), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Again: the same key is the same bytes, so nothing is written.
	if err := s.Put(key(0), payload(0)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustGet(t, s, i)
	}
	k := key(2).String()
	if _, err := os.Stat(filepath.Join(dir, "records", k[:2], k)); err != nil {
		t.Fatalf("the record is not at records/%s/%s: %v", k[:2], k, err)
	}
	// Another process (a second Open) sees the same records.
	mustGet(t, open(t, dir), 1)
	st := s.Status()
	if st.Hits != 3 || st.Misses != 1 || st.Writes != 3 || st.Damaged != 0 {
		t.Fatalf("status %+v: want 3 hits, 1 miss, 3 writes", st)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(es) != 0 {
		t.Fatalf("temporary files left: %v", es)
	}
}

// Each way a record file can be wrong is a miss, never an error and never
// its bytes; Put makes it again even where a file of the right size is in
// the way; an old damaged file is removed by the reader.
func TestDamagedRecordIsMiss(t *testing.T) {
	good := func(i int) []byte {
		p := payload(i)
		return append(appendHeader(nil, recordMagic, key(i), p), p...)
	}
	cases := []struct {
		name string
		file func(i int) []byte
	}{
		{"empty", func(int) []byte { return nil }},
		{"truncated", func(i int) []byte { b := good(i); return b[:len(b)/2] }},
		{"header only", func(i int) []byte { return good(i)[:headerLen(recordMagic, len(payload(i)))] }},
		{"trailing bytes", func(i int) []byte { return append(good(i), 0) }},
		{"wrong checksum", func(i int) []byte { b := good(i); b[len(b)-1] ^= 1; return b }},
		{"another key's record", func(i int) []byte { return good(i + 1000) }},
		{"a manifest", func(i int) []byte { b := good(i); copy(b, manifestMagic); return b }},
		{"foreign", func(int) []byte { return []byte("#!/bin/sh\necho not a record\n") }},
		{"length past the end", func(i int) []byte {
			b := good(i)
			return append(append(b[:40:40], 0xff, 0xff, 0xff, 0xff, 0x0f), b[40+5:]...)
		}},
	}
	for n, c := range cases {
		for _, old := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/old=%v", c.name, old), func(t *testing.T) {
				dir := t.TempDir()
				s := open(t, dir)
				i := n
				path := s.recordPath(key(i))
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, c.file(i), 0o600); err != nil {
					t.Fatal(err)
				}
				if old {
					past := time.Now().Add(-2 * badGrace)
					os.Chtimes(path, past, past)
				}
				if got, ok := s.Get(key(i)); ok {
					t.Fatalf("a damaged record was a hit (%d bytes)", len(got))
				}
				if st := s.Status(); st.Damaged != 1 || st.Misses != 1 {
					t.Fatalf("status %+v: want it counted damaged and a miss", st)
				}
				if _, err := os.Stat(path); old != errors.Is(err, os.ErrNotExist) {
					t.Fatalf("old=%v: the damaged file's stat says %v", old, err)
				}
				if err := s.Put(key(i), payload(i)); err != nil {
					t.Fatal(err)
				}
				mustGet(t, s, i)
			})
		}
	}
}

func manifest(root string, set Key, keys ...int) *Manifest {
	m := &Manifest{Root: root, Set: set, Data: []byte("modules")}
	for _, i := range keys {
		m.Files = append(m.Files, File{Path: fmt.Sprintf("pkg/f%d.go", i), Lang: "go", Key: key(i), Size: int64(len(payload(i))), ModTime: 1, Inode: int64(i), CTime: 2})
	}
	return m
}

func TestManifest(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	set := Key{1}
	if _, ok := s.Manifest("/r", set); ok {
		t.Fatal("a manifest in an empty store")
	}
	want := manifest("/r", set, 1, 2, 3)
	if err := s.PutManifest(want); err != nil {
		t.Fatal(err)
	}
	if err := s.PutManifest(manifest("/r", Key{2}, 4)); err != nil {
		t.Fatal(err)
	}
	got, ok := s.Manifest("/r", set)
	if !ok || got.Root != "/r" || len(got.Files) != 3 || got.Files[2] != want.Files[2] || string(got.Data) != "modules" {
		t.Fatalf("Manifest = %+v, %v", got, ok)
	}
	if _, ok := s.Manifest("/other", set); ok {
		t.Fatal("another root's manifest")
	}
	if m, ok := s.Manifest("/r", Key{2}); !ok || len(m.Files) != 1 {
		t.Fatal("the same root with another language set is another manifest")
	}

	// Reading a manifest makes it recently used.
	_, name := manifestID("/r", set)
	path := filepath.Join(dir, "manifests", name)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(path, past, past)
	s.Manifest("/r", set)
	if fi, _ := os.Stat(path); time.Since(fi.ModTime()) > time.Minute {
		t.Fatal("reading the manifest did not mark it used")
	}

	// A damaged manifest is a miss.
	b, _ := os.ReadFile(path)
	b[len(b)-3] ^= 0x40
	os.WriteFile(path, b, 0o600)
	if _, ok := s.Manifest("/r", set); ok {
		t.Fatal("a damaged manifest was read")
	}
}

// Processes writing the same records at once (this test binary, run
// again as writers, one of them sweeping meanwhile) leave every record
// whole, and no reader ever sees a partial one.
func TestConcurrentProcesses(t *testing.T) {
	const keys = 500
	if dir := os.Getenv("STORE_TEST_CHILD"); dir != "" {
		seed, _ := strconv.Atoi(os.Getenv("STORE_TEST_SEED"))
		s := open(t, dir)
		// Every writer goes through the keys in one order, reading the
		// keys next to the one it writes: they meet on the same files.
		order := rand.New(rand.NewPCG(1, 1)).Perm(keys)
		for n, i := range order {
			if err := s.Put(key(i), payload(i)); err != nil {
				t.Fatal(err)
			}
			for _, j := range []int{order[max(n-1, 0)], order[min(n+1, keys-1)], order[min(n+2, keys-1)]} {
				if got, ok := s.Get(key(j)); ok && !bytes.Equal(got, payload(j)) {
					t.Fatalf("key %d: a hit with other bytes", j)
				}
			}
			if seed == 0 && n%50 == 0 {
				if _, err := s.Sweep(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if st := s.Status(); st.Damaged != 0 {
			t.Fatalf("a writer saw %d damaged records", st.Damaged)
		}
		return
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for seed := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STORE_TEST_CHILD="+dir, "STORE_TEST_SEED="+strconv.Itoa(seed))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	s := open(t, dir)
	for i := range keys {
		mustGet(t, s, i)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(es) != 0 {
		t.Fatalf("temporary files left: %d", len(es))
	}
}

// age sets a file's mtime d in the past.
func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	past := time.Now().Add(-d)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
}

// Sweep keeps the most recently used manifests and their records within
// the bound, removes the rest once past the grace, and touches nothing it
// did not name.
func TestSweepKeepsNewestManifests(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir)
	// Five roots of 10 records each (40 KiB at most apiece), sharing
	// records 0-4; root r0 is the least recently used.
	for r := range 5 {
		var ks []int
		for i := range 5 {
			ks = append(ks, i, 5+r*5+i)
		}
		for _, i := range ks {
			if err := w.Put(key(i), payload(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.PutManifest(manifest(fmt.Sprintf("/r%d", r), Key{}, ks...)); err != nil {
			t.Fatal(err)
		}
		_, name := manifestID(fmt.Sprintf("/r%d", r), Key{})
		age(t, filepath.Join(dir, "manifests", name), time.Duration(5-r)*time.Hour)
	}
	// A record no manifest names, young; one old; a foreign file; a
	// writer's temporary file left by a dead process.
	w.Put(key(900), payload(900))
	w.Put(key(901), payload(901))
	age(t, w.recordPath(key(901)), time.Hour)
	foreign := filepath.Join(dir, "records", "zz-notes.txt")
	os.WriteFile(foreign, []byte("mine"), 0o600)
	deadTmp := filepath.Join(dir, "tmp", "abc.1.0.tmp")
	os.WriteFile(deadTmp, []byte("half"), 0o600)
	age(t, deadTmp, 2*time.Hour)
	for i := range 30 {
		age(t, w.recordPath(key(i)), time.Hour)
	}

	// The bound fits about three roots' records.
	size := func(ks ...int) int64 {
		var n int64
		for _, i := range ks {
			fi, err := os.Stat(w.recordPath(key(i)))
			if err != nil {
				t.Fatal(err)
			}
			n += usage(fi)
		}
		return n
	}
	shared := size(0, 1, 2, 3, 4)
	per := (size(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29) - shared) / 5
	bound := int64(float64(shared+3*per+3*8192) / keepShare)
	s := Open(dir, Options{MaxBytes: bound})
	st, err := s.Sweep()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bound %d: %+v", bound, st)
	if st.ManifestsRemoved < 1 || st.ManifestsRemoved > 3 {
		t.Fatalf("removed %d manifests, want the oldest one to three", st.ManifestsRemoved)
	}
	if st.BytesAfter > bound {
		t.Fatalf("%d bytes after the sweep, over the bound %d", st.BytesAfter, bound)
	}
	if _, ok := s.Manifest("/r4", Key{}); !ok {
		t.Fatal("the newest manifest was removed")
	}
	if _, ok := s.Manifest("/r0", Key{}); ok {
		t.Fatal("the oldest manifest was kept")
	}
	for r := range 5 {
		_, kept := s.Manifest(fmt.Sprintf("/r%d", r), Key{})
		for i := range 5 {
			own := 5 + r*5 + i
			if _, ok := s.Get(key(own)); ok != kept {
				t.Errorf("root %d (kept %v): its record %d present %v", r, kept, own, ok)
			}
		}
	}
	for i := range 5 {
		mustGet(t, s, i) // shared with kept roots
	}
	mustGet(t, s, 900) // young: a build may be about to name it
	if _, ok := s.Get(key(901)); ok {
		t.Error("an old record no manifest names was kept")
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file the store did not name was touched: %v", err)
	}
	if _, err := os.Stat(deadTmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead writer's temporary file was kept: %v", err)
	}
	if s.SweepDue() {
		t.Error("a sweep is due right after one")
	}
}

// While one process sweeps, another's Sweep returns at once.
func TestSweepIsExclusive(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, "sweep.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	st, err := s.Sweep()
	if err != nil || !st.Skipped {
		t.Fatalf("Sweep = %+v, %v; want skipped", st, err)
	}
}

// A store on a read-only file system serves what it has, writes nothing
// and says why; so does one whose disk is full, from the first write that
// fails; neither is an error of Open.
func TestReadOnlyStore(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir)
	w.Put(key(1), payload(1))
	w.PutManifest(manifest("/r", Key{}, 1))
	readOnly(t, dir)

	s := Open(dir, Options{})
	st := s.Status()
	if !st.Readable || st.Writable || !strings.Contains(st.Reason, "read-only") && !strings.Contains(st.Reason, "cannot be written") {
		t.Fatalf("status %+v: want readable, not writable, and why", st)
	}
	mustGet(t, s, 1)
	if _, ok := s.Manifest("/r", Key{}); !ok {
		t.Fatal("the manifest of a read-only store was not read")
	}
	if err := s.Put(key(2), payload(2)); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Put = %v, want ErrNotWritable", err)
	}
	if err := s.PutManifest(manifest("/r2", Key{})); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("PutManifest = %v, want ErrNotWritable", err)
	}
	if _, err := s.Sweep(); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Sweep = %v, want ErrNotWritable", err)
	}
}

func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	s.Put(key(1), payload(1))
	// Every new file is the kernel's full device: writes fail with the
	// kernel's own ENOSPC.
	s.create = func(string) (*os.File, error) { return os.OpenFile("/dev/full", os.O_WRONLY, 0) }
	err := s.Put(key(2), payload(2)[:1000])
	if !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Put on a full disk = %v, want ErrNotWritable", err)
	}
	st := s.Status()
	if st.Writable || !st.Readable || !strings.Contains(st.Reason, "full") {
		t.Fatalf("status %+v: want not writable because the disk is full", st)
	}
	if err := s.Put(key(3), payload(3)); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("a later Put = %v, want ErrNotWritable at once", err)
	}
	mustGet(t, s, 1)
	if _, ok := s.Get(key(2)); ok {
		t.Fatal("a record that was not written is a hit")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("/dev/full: %v", err)
	}
}

func TestNoStore(t *testing.T) {
	s := Open("", Options{})
	if st := s.Status(); st.Readable || st.Writable || st.Reason == "" {
		t.Fatalf("status %+v", st)
	}
	if _, ok := s.Get(key(1)); ok {
		t.Fatal("a hit with no store")
	}
	if err := s.Put(key(1), nil); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Put = %v", err)
	}
	// A folder that is a file.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	s = Open(file, Options{})
	if st := s.Status(); st.Readable || st.Writable || !strings.Contains(st.Reason, "cannot be used") {
		t.Fatalf("status %+v", st)
	}
}

func TestDefaultDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if got, want := DefaultDir(), filepath.Join(cache, "builtin-tools", "graph"); got != want {
		t.Fatalf("DefaultDir = %q, want %q", got, want)
	}
}

// Any bytes in a record's or a manifest's place are a miss or the file
// the store wrote; never a panic, never another key's payload.
func FuzzStoreFile(f *testing.F) {
	p := payload(1)[:300]
	f.Add(append(appendHeader(nil, recordMagic, key(1), p), p...))
	mp, _ := manifest("/r", Key{}, 1, 2).AppendBinary(nil)
	id, name := manifestID("/r", Key{})
	f.Add(append(appendHeader(nil, manifestMagic, id, mp), mp...))
	f.Add([]byte(recordMagic))
	dir := f.TempDir()
	s := Open(dir, Options{})
	rec := s.recordPath(key(1))
	os.MkdirAll(filepath.Dir(rec), 0o700)
	man := filepath.Join(dir, "manifests", name)
	f.Fuzz(func(t *testing.T, data []byte) {
		os.WriteFile(rec, data, 0o600)
		os.WriteFile(man, data, 0o600)
		if got, ok := s.Get(key(1)); ok {
			if want, err := parse(data, recordMagic, key(1)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("a hit that is not the file's checked payload")
			}
		}
		if m, ok := s.Manifest("/r", Key{}); ok && m.Root != "/r" {
			t.Fatalf("a manifest of root %q", m.Root)
		}
		s.Sweep()
	})
}
