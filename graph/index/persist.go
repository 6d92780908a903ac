package index

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// A snapshot keeps an index's records on disk (Options.CacheDir), one file
// per root and set of query files, so a new process over the same tree
// reads what did not change instead of parsing it: a file whose size,
// modification time and inode match its record is taken from the
// snapshot; any other is read and parsed again. The format is a string
// table and varint records, written whole to a temporary file and renamed.

const snapshotMagic = "btgraph13"

func (x *Index) snapshotPath() string {
	if x.opts.CacheDir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(snapshotMagic + "\x00" + x.root + "\x00" + x.langs.Hash()))
	return filepath.Join(x.opts.CacheDir, hex.EncodeToString(h[:12])+".graph")
}

type snapWriter struct {
	w    *bufio.Writer
	strs map[string]uint64
	buf  []byte
	err  error
}

func (s *snapWriter) uv(v uint64) {
	s.buf = binary.AppendUvarint(s.buf[:0], v)
	if _, err := s.w.Write(s.buf); err != nil && s.err == nil {
		s.err = err
	}
}
func (s *snapWriter) iv(v int64)           { s.uv(uint64(v<<1) ^ uint64(v>>63)) }
func (s *snapWriter) str(v string)         { s.uv(s.strs[v]) }
func (s *snapWriter) raw(b []byte)         { s.w.Write(b) }
func (s *snapWriter) add(v string)         { s.strs[v] = 0 }
func (s *snapWriter) addImp(i lang.Import) { s.add(i.Module); s.add(i.Name); s.add(i.Local) }

// save writes the index's records to its snapshot.
func (x *Index) save() error {
	p := x.snapshotPath()
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	var files []*snap.Entry // in path order
	x.Snapshot().Each(func(f *snap.Entry) bool {
		files = append(files, f)
		return true
	})
	tmp, err := os.CreateTemp(filepath.Dir(p), ".graph-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	s := &snapWriter{w: bufio.NewWriterSize(tmp, 1<<20), strs: map[string]uint64{"": 0}}
	// A snapshot is immutable: it is read with no lock.
	for _, f := range files {
		s.add(f.Rel)
		s.add(f.Lang.ID)
		s.add(f.Package)
		s.add(f.Exports)
		s.add(f.Default)
		s.add(f.BuildLine)
		for i := range f.Defs {
			d := &f.Defs[i]
			s.add(d.Name)
			s.add(d.Kind)
			s.add(d.Container)
			s.add(d.Self)
			s.add(d.Scope)
			s.add(d.Type)
		}
		for _, fd := range f.Fields {
			s.add(fd.Container)
			s.add(fd.Name)
			s.add(fd.Type)
		}
		for _, str := range f.Strs {
			s.add(str)
		}
		for _, im := range f.Imports {
			s.addImp(im)
		}
	}
	table := make([]string, 0, len(s.strs))
	for str := range s.strs {
		table = append(table, str)
	}
	sort.Strings(table)
	for i, str := range table {
		s.strs[str] = uint64(i)
	}
	s.raw([]byte(snapshotMagic))
	s.uv(uint64(len(table)))
	for _, str := range table {
		s.uv(uint64(len(str)))
		s.w.WriteString(str)
	}
	s.uv(uint64(len(files)))
	for _, f := range files {
		s.str(f.Rel)
		s.str(f.Lang.ID)
		s.iv(f.Stamp.Size)
		s.iv(f.Stamp.ModTime)
		s.uv(f.Stamp.Inode)
		s.iv(f.Stamp.CTime)
		s.raw(f.Content[:])
		s.str(f.Package)
		s.str(f.Exports)
		s.str(f.Default)
		s.str(f.BuildLine)
		s.uv(uint64(f.Errors))
		s.uv(uint64(len(f.ErrorAt)))
		for _, e := range f.ErrorAt {
			s.uv(uint64(e))
		}
		s.uv(uint64(len(f.Defs)))
		for i := range f.Defs {
			d := &f.Defs[i]
			s.str(d.Name)
			s.str(d.Kind)
			s.str(d.Container)
			s.str(d.Self)
			s.str(d.Scope)
			s.str(d.Type)
			for _, v := range []int32{d.Line, d.EndLine, d.Col, d.Start, d.End, d.NameAt} {
				s.iv(int64(v))
			}
			// Bit 0: local; above it, how the type is known.
			flags := uint64(d.How) << 1
			if d.Local {
				flags |= 1
			}
			s.uv(flags)
		}
		s.uv(uint64(len(f.Strs)))
		for _, str := range f.Strs {
			s.str(str)
		}
		s.uv(uint64(len(f.Refs)))
		for i := range f.Refs {
			r := &f.Refs[i]
			s.uv(uint64(r.Name))
			s.uv(uint64(r.Recv))
			s.uv(uint64(r.Kind))
			for _, v := range []int32{r.Line, r.Col, r.Encl, r.At} {
				s.iv(int64(v))
			}
		}
		s.uv(uint64(len(f.Imports)))
		for _, im := range f.Imports {
			s.str(im.Module)
			s.str(im.Name)
			s.str(im.Local)
			s.iv(int64(im.Line))
		}
		s.uv(uint64(len(f.Locals)))
		for _, l := range f.Locals {
			s.uv(uint64(l.Name))
			s.iv(int64(l.Encl))
			s.iv(int64(l.At))
			s.iv(int64(l.End))
			s.uv(uint64(l.Type))
			s.uv(uint64(l.How))
			s.iv(int64(l.Line))
		}
		s.uv(uint64(len(f.Fields)))
		for _, fd := range f.Fields {
			s.str(fd.Container)
			s.str(fd.Name)
			s.str(fd.Type)
			s.uv(uint64(fd.How))
			s.iv(int64(fd.Line))
			s.iv(int64(fd.At))
		}
	}
	if err := s.w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if s.err != nil {
		tmp.Close()
		return s.err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

type snapReader struct {
	r     *bufio.Reader
	strs  []string
	err   error
	limit uint64 // the snapshot's size: no count can exceed it
}

func (s *snapReader) uv() uint64 {
	v, err := binary.ReadUvarint(s.r)
	if err != nil && s.err == nil {
		s.err = err
	}
	return v
}

func (s *snapReader) iv() int64 {
	u := s.uv()
	return int64(u>>1) ^ -int64(u&1)
}

func (s *snapReader) str() string {
	i := s.uv()
	if i >= uint64(len(s.strs)) {
		if s.err == nil {
			s.err = errors.New("string index out of range")
		}
		return ""
	}
	return s.strs[i]
}

// count reads a length, refusing one larger than the snapshot could hold.
func (s *snapReader) count() int {
	n := s.uv()
	if n > s.limit {
		if s.err == nil {
			s.err = fmt.Errorf("count %d too large", n)
		}
		return 0
	}
	return int(n)
}

// load reads the snapshot's records, by Rel; a missing, stale or damaged
// snapshot gives none (the build then parses everything).
func (x *Index) load() map[string]*snap.Entry {
	p := x.snapshotPath()
	if p == "" {
		return nil
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil
	}
	s := &snapReader{r: bufio.NewReaderSize(fh, 1<<20), limit: uint64(st.Size())}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(s.r, magic); err != nil || string(magic) != snapshotMagic {
		return nil
	}
	n := s.count()
	s.strs = make([]string, n)
	for i := range s.strs {
		l := s.count()
		b := make([]byte, l)
		if _, err := io.ReadFull(s.r, b); err != nil {
			return nil
		}
		s.strs[i] = lang.Intern(string(b))
	}
	nf := s.count()
	out := make(map[string]*snap.Entry, nf)
	for i := 0; i < nf && s.err == nil; i++ {
		f := &snap.Entry{Record: &lang.Record{}}
		f.Rel = s.str()
		f.Dir = pathDir(f.Rel)
		f.Lang = x.langs.Lookup(s.str())
		f.Stamp.Size = s.iv()
		f.Stamp.ModTime = s.iv()
		f.Stamp.Inode = s.uv()
		f.Stamp.CTime = s.iv()
		if _, err := io.ReadFull(s.r, f.Content[:]); err != nil {
			return nil
		}
		f.Package = s.str()
		f.Exports = s.str()
		f.Default = s.str()
		f.BuildLine = s.str()
		f.Errors = int(s.uv())
		f.ErrorAt = make([]int, s.count())
		for j := range f.ErrorAt {
			f.ErrorAt[j] = int(s.uv())
		}
		f.Defs = make([]lang.Def, s.count())
		for j := range f.Defs {
			d := &f.Defs[j]
			d.Name, d.Kind, d.Container, d.Self, d.Scope, d.Type = s.str(), s.str(), s.str(), s.str(), s.str(), s.str()
			d.Line, d.EndLine, d.Col = int32(s.iv()), int32(s.iv()), int32(s.iv())
			d.Start, d.End, d.NameAt = int32(s.iv()), int32(s.iv()), int32(s.iv())
			flags := s.uv()
			d.Local, d.How = flags&1 == 1, uint8(flags>>1)
			if int(d.How) >= len(lang.HowText) {
				s.err = errors.New("a definition typed in an unknown way")
			}
		}
		f.Strs = make([]string, s.count())
		for j := range f.Strs {
			f.Strs[j] = s.str()
		}
		if len(f.Strs) == 0 || f.Strs[0] != "" {
			s.err = errors.New("a file's string table does not start empty")
			break
		}
		id := func() uint32 {
			v := s.uv()
			if v >= uint64(len(f.Strs)) {
				s.err = errors.New("a string id past its file's table")
				return 0
			}
			return uint32(v)
		}
		f.Refs = make([]lang.Ref, s.count())
		for j := range f.Refs {
			r := &f.Refs[j]
			r.Name, r.Recv = id(), id()
			r.Kind = uint8(s.uv())
			r.Line, r.Col, r.Encl, r.At = int32(s.iv()), int32(s.iv()), int32(s.iv()), int32(s.iv())
			if r.Encl >= int32(len(f.Defs)) {
				s.err = errors.New("reference enclosed by a missing definition")
			}
		}
		f.Imports = make([]lang.Import, s.count())
		for j := range f.Imports {
			im := &f.Imports[j]
			im.Module, im.Name, im.Local = s.str(), s.str(), s.str()
			im.Line = int32(s.iv())
		}
		if n := s.count(); n > 0 {
			f.Locals = make([]lang.Local, n)
			for j := range f.Locals {
				l := &f.Locals[j]
				l.Name, l.Encl, l.At, l.End = id(), int32(s.iv()), int32(s.iv()), int32(s.iv())
				l.Type, l.How, l.Line = id(), uint8(s.uv()), int32(s.iv())
				if l.Encl >= int32(len(f.Defs)) {
					s.err = errors.New("a local in a missing definition")
				}
				if int(l.How) >= len(lang.HowText) {
					s.err = errors.New("a local typed in an unknown way")
				}
			}
		}
		if n := s.count(); n > 0 {
			f.Fields = make([]lang.Field, n)
			for j := range f.Fields {
				fd := &f.Fields[j]
				fd.Container, fd.Name, fd.Type = s.str(), s.str(), s.str()
				fd.How, fd.Line, fd.At = uint8(s.uv()), int32(s.iv()), int32(s.iv())
				if int(fd.How) >= len(lang.HowText) {
					s.err = errors.New("a field typed in an unknown way")
				}
			}
		}
		if f.Lang == nil {
			continue
		}
		f.DefOrder = lang.Order(len(f.Defs), func(i int) string { return f.Defs[i].Name })
		f.RefOrder = lang.Order(len(f.Refs), func(i int) string { return f.Strs[f.Refs[i].Name] })
		out[f.Rel] = f
	}
	if s.err != nil {
		return nil
	}
	return out
}

func pathDir(rel string) string {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			return rel[:i]
		}
	}
	return "."
}
