package lang

import (
	"crypto/sha256"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"sync"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/extract"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// extractVersion is raised when what extraction reads from outside this
// package changes its output (astgrep's capture order, its rows): the
// package's own sources are hashed (extractorHash) and need no bump.
const extractVersion = 1

// The sources that turn captures into a record: any change to them makes
// every record key another, so a record is never read by code that would
// extract it differently.
//
// The extraction's (extract.Sources) and the record's (record.Sources)
// are hashed after them.
//
//go:embed language.go typeforms.go variants.go vocab.go
var extractorSources embed.FS

// extractorHash is the SHA-256 of extractorSources, extract.Sources and
// record.Sources, each in name order.
var extractorHash = func() [32]byte {
	h := sha256.New()
	for _, sources := range []fs.FS{extractorSources, extract.Sources, record.Sources} {
		entries, _ := fs.ReadDir(sources, ".")
		for _, e := range entries {
			b, _ := fs.ReadFile(sources, e.Name())
			fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
			h.Write(b)
		}
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}()

// fingerprint is the key of everything that shapes l's records besides a
// file's bytes: its language.json (and those it extends), its query
// files, its grammar (astgrep's fingerprint: the bundled module's version
// and symbol table, or a run-time library's bytes), this package's
// extraction sources and the record schema.
func (l *Language) fingerprint(grammar string) [32]byte {
	h := sha256.New()
	h.Write([]byte("btgraph-lang\x00" + l.ID + "\x00"))
	h.Write([]byte(strconv.Itoa(len(l.source)) + "\x00" + l.source))
	h.Write([]byte("\x00" + grammar + "\x00" + record.SchemaHash + "\x00" + strconv.Itoa(extractVersion) + "\x00"))
	h.Write(extractorHash[:])
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// keyState makes a set's fingerprints once, when the first key is asked
// for: hashing a grammar's tables costs up to tens of milliseconds, which
// a process that keeps no records does not pay.
type keyState struct {
	once sync.Once
	e    *astgrep.Engine
	set  *Set
}

func (k *keyState) wait() {
	if k == nil {
		return // a Language not from Load: no keys
	}
	k.once.Do(func() {
		var wg sync.WaitGroup
		for _, l := range k.set.list {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A grammar with no fingerprint leaves the language's
				// records out of the store: nothing would tell its
				// versions apart.
				if g, err := k.e.GrammarFingerprint(l.Grammar); err == nil {
					l.fp = l.fingerprint(g)
				}
			}()
		}
		wg.Wait()
	})
}

// Keyed says whether l's records can be kept by content (RecordKey): its
// grammar gave a fingerprint.
func (l *Language) Keyed() bool {
	l.keys.wait()
	return l.fp != [32]byte{}
}

// RecordKey names the record of a file of l whose bytes have the SHA-256
// content: the same bytes with the same extraction give the same key, at
// any path, in any root, on any machine.
func (l *Language) RecordKey(content [32]byte) [32]byte {
	l.keys.wait()
	h := sha256.New()
	h.Write([]byte("btgraph-record\x00"))
	h.Write(l.fp[:])
	h.Write(content[:])
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Fingerprint names the set: its languages' fingerprints, by id. A root's
// manifest is kept per root and set.
func (s *Set) Fingerprint() [32]byte {
	s.keys.wait()
	h := sha256.New()
	h.Write([]byte("btgraph-set\x00"))
	for _, l := range s.list {
		h.Write([]byte(l.ID + "\x00"))
		h.Write(l.fp[:])
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}
