package statedir

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Sink takes a run's output as it arrives: all of it goes to a part file
// in the worker's folder (renamed to the result file when the run ends, so
// no reader sees half of it), and the first bytes stay in memory for the
// answer. When the file cannot be made, the output is kept in memory up to
// memMax instead and the rest counted as dropped.
type Sink struct {
	mu      sync.Mutex
	part    string // the part file's path, "" without one
	f       *os.File
	ferr    error // why the part file failed
	head    []byte
	headMax int
	n       int64 // bytes written in all
	kept    int64 // bytes the file holds
}

// NewSink makes the sink of a run whose part file is part, keeping its
// first headMax bytes in memory (memMax without the file).
func NewSink(part string, headMax, memMax int) *Sink {
	s := &Sink{part: part, headMax: headMax}
	f, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		s.ferr, s.part = err, ""
		s.headMax = memMax
		return s
	}
	s.f = f
	return s
}

func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += int64(len(p))
	if room := s.headMax - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(len(p), room)]...)
	}
	if s.f != nil {
		if _, err := s.f.Write(p); err != nil {
			// The file keeps what it has; the answer says where it stops.
			s.ferr = err
			s.f.Close()
			s.f = nil
		} else {
			s.kept += int64(len(p))
		}
	}
	return len(p), nil
}

// Empty says whether nothing was written.
func (s *Sink) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n == 0
}

// Output is what a sink holds once the run ended.
type Output struct {
	Head  string // the start, as valid UTF-8
	Whole bool   // Head is all of it
	File  string // the file holding it, "" when none does
	Bytes int64
	Notes []string
}

// Close ends the sink: the part file becomes resultPath (or is removed
// when nothing was written).
func (s *Sink) Close(resultPath string) Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := Output{Bytes: s.n, Whole: int64(len(s.head)) == s.n}
	o.Head = ValidPrefix(s.head)
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.part != "" {
		if s.kept == 0 {
			os.Remove(s.part)
		} else if err := os.Rename(s.part, resultPath); err != nil {
			os.Remove(s.part)
			s.ferr = err
		} else {
			o.File = resultPath
		}
	}
	if s.ferr != nil && !o.Whole {
		if o.File != "" && s.kept < s.n {
			o.Notes = append(o.Notes, fmt.Sprintf("the result file holds only the first %d of %d bytes of output (%v)", s.kept, s.n, s.ferr))
		} else if o.File == "" {
			o.Notes = append(o.Notes, fmt.Sprintf("the output could not be written to the state folder (%v); %d bytes past the first %d were not kept", s.ferr, s.n-int64(len(s.head)), len(s.head)))
		}
	}
	return o
}

// Discard drops the part file: the run's result came another way.
func (s *Sink) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.part != "" {
		os.Remove(s.part)
	}
}

// ValidPrefix is b without a character cut at its end, as valid UTF-8.
func ValidPrefix(b []byte) string {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// ReadHead reads the first n bytes of a file.
func ReadHead(path string, n int) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := make([]byte, min(int64(n), fi.Size()))
	k, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, 0, err
	}
	return b[:k], fi.Size(), nil
}
