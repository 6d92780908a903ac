package lang

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/languages"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// sample is one file's bytes and its language.
type sample struct {
	name string
	l    *Language
	src  []byte
}

// bundled is the bundled languages, loaded on an engine the test's end
// closes.
func bundled(t testing.TB) (*astgrep.Engine, *Set) {
	t.Helper()
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	s, err := Load(e)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

// eachFixtureFile calls fn with every file of the graph's fixtures and
// the archive it is in.
func eachFixtureFile(t testing.TB, fn func(archive string, f txtar.File)) {
	t.Helper()
	paths, _ := filepath.Glob("../testdata/fixtures/*.txtar")
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			fn(p, f)
		}
	}
}

// samples are every file of the graph's fixtures and some of GOROOT's
// sources, in a language of s.
func samples(t testing.TB, s *Set) []sample {
	t.Helper()
	var out []sample
	eachFixtureFile(t, func(p string, f txtar.File) {
		if l := s.ForFile(f.Name); l != nil {
			out = append(out, sample{filepath.Base(p) + ":" + f.Name, l, f.Data})
		}
	})
	if len(out) == 0 {
		t.Fatal("no fixture files")
	}
	gr, err := proc.Probe(context.Background(), testenv.LookPath(t, "go"), "env", "GOROOT")
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(gr))
	// read adds the files named, in language id; none is a failure.
	read := func(names []string, id, where string) {
		if len(names) == 0 {
			t.Fatalf("no %s sources under GOROOT %s", id, where)
		}
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sample{name, s.Lookup(id), data})
		}
	}
	var gos []string
	for _, dir := range []string{"go/ast", "net/http", "runtime", "syscall"} {
		names, _ := filepath.Glob(filepath.Join(goroot, "src", dir, "*.go"))
		for i, name := range names {
			if i%4 == 0 {
				gos = append(gos, name)
			}
		}
	}
	read(gos, "go", goroot)
	// C: the runtime's cgo sources and headers.
	cs, _ := filepath.Glob(filepath.Join(goroot, "src", "runtime", "cgo", "*.[ch]"))
	read(cs, "c", goroot+"/src/runtime/cgo")
	return out
}

func extractAll(t testing.TB) []*record.Record {
	t.Helper()
	recs, _ := extractAllLangs(t)
	return recs
}

// extractAllLangs is extractAll with each record's language.
func extractAllLangs(t testing.TB) ([]*record.Record, []*Language) {
	return extractWith(t, nil)
}

// extractWith is extractAllLangs over the samples and those more adds.
func extractWith(t testing.TB, more func(*Set) []sample) ([]*record.Record, []*Language) {
	t.Helper()
	e, s := bundled(t)
	var out []*record.Record
	var ls []*Language
	all := samples(t, s)
	if more != nil {
		all = append(all, more(s)...)
	}
	for _, sm := range all {
		r, err := e.CaptureSnippet(context.Background(), sm.l.Query(), sm.src)
		if err != nil {
			t.Fatalf("%s: %v", sm.name, err)
		}
		out = append(out, sm.l.Extractor().Extract(sm.src, r))
		ls = append(ls, sm.l)
	}
	return out, ls
}

// Every fixture file's record, and GOROOT samples', come back from their
// encoding as they were extracted.
func TestCodecRoundTrip(t *testing.T) {
	recs := extractAll(t)
	total := 0
	for i, r := range recs {
		if err := r.Validate(); err != nil {
			t.Fatalf("record %d as extracted fails its check: %v", i, err)
		}
		b, err := r.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		got, err := record.Decode(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !sameValue(reflect.ValueOf(r).Elem(), reflect.ValueOf(got).Elem()) {
			t.Fatalf("record %d differs after a round trip:\n%+v\n%+v", i, r, got)
		}
		if again, _ := got.AppendBinary(nil); !bytes.Equal(again, b) {
			t.Fatalf("record %d encodes differently after a round trip", i)
		}
	}
	t.Logf("%d records, %d bytes encoded", len(recs), total)
}

// sameValue is reflect.DeepEqual with an empty slice equal to a nil one
// and unexported fields (extraction's scratch) left out.
func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if a.Type().Field(i).IsExported() && !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

// Any bytes decode to a checked record or an error, never a panic, and a
// record that passes its check can be read through every accessor.
func FuzzRecord(f *testing.F) {
	for i, r := range extractAll(f) {
		if i%7 == 0 {
			b, _ := r.AppendBinary(nil)
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := record.Decode(data)
		if err != nil {
			return
		}
		for i := range r.Refs {
			ref := &r.Refs[i]
			name := r.RefName(ref)
			_ = r.RefReceiver(ref)
			r.RefsNamed(name)
			r.DefsNamed(name)
			r.BoundAround(name, ref.Encl, ref.At)
			r.Rebound(name, ref.Encl, ref.At)
			r.LocalDecl(name, ref.Encl, ref.At)
			r.EnclosingAt(ref.At)
		}
		for i := range r.Locals {
			_ = r.Str(r.Locals[i].Type)
		}
		if r.Errors > 0 {
			_ = r.ErrorAt[0]
		}
		b, _ := r.AppendBinary(nil)
		if _, err := record.Decode(b); err != nil {
			t.Fatalf("a checked record does not decode from its own encoding: %v", err)
		}
	})
}

// A record's key changes with anything that changes extraction: here a
// language.json that differs by one byte; a language's keys differ from
// another's for the same bytes.
func TestRecordKey(t *testing.T) {
	e, s := bundled(t)
	for _, l := range s.All() {
		if !l.Keyed() {
			t.Errorf("%s: no fingerprint", l.ID)
		}
	}
	content := [32]byte{1}
	goKey := s.Lookup("go").RecordKey(content)
	if goKey == s.Lookup("c").RecordKey(content) || goKey == s.Lookup("go").RecordKey([32]byte{2}) {
		t.Fatal("two languages, or two contents, share a key")
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "go"), mustSub(t, "go")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "go", "language.json")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Load(e, dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Lookup("go").RecordKey(content) == goKey || s2.Fingerprint() == s.Fingerprint() {
		t.Fatal("a changed language.json kept the record key")
	}
	if s2.Lookup("c").RecordKey(content) != s.Lookup("c").RecordKey(content) {
		t.Fatal("another language's key changed")
	}
}

func mustSub(t *testing.T, dir string) fs.FS {
	sub, err := fs.Sub(languages.FS, dir)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
