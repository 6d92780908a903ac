package astgrep

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// treeFormat numbers how this package turns a parse into the trees
// queries see (which nodes, which fields); a change that moves a capture
// moves it, and so every grammar's fingerprint.
const treeFormat = 1

// GrammarFingerprint returns a hash (hex) that identifies the grammar a
// language id or alias is parsed with, for keys of facts extracted from
// its trees that outlive the process: it changes when the grammar's
// tables change (symbols, fields, states), when a run-time grammar's
// library file changes, when the bundled grammars' module version
// changes, and when this package changes how it flattens a parse. Equal
// fingerprints in two processes mean equal trees for equal bytes.
func (e *Engine) GrammarFingerprint(language string) (string, error) {
	l, err := e.loaded(language)
	if err != nil {
		return "", err
	}
	l.printOnce.Do(func() { l.print, l.printErr = l.fingerprint() })
	return l.print, l.printErr
}

func (l *language) fingerprint() (string, error) {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(treeFormat))
	h.Write(b[:])
	io.WriteString(h, l.id+"\x00")
	// The parse tables are walked only where nothing else pins them: a
	// library file's bytes do, and so does a bundled grammar's module
	// when the binary records its checksum (the walk costs a quarter of a
	// second per language, at every process's first use of the store).
	module := bundledModule()
	binary.LittleEndian.PutUint64(b[:], l.ts.TableHash(l.spec.Bundled != "" && !strings.Contains(module, " h1:")))
	h.Write(b[:])
	if l.spec.Bundled != "" {
		io.WriteString(h, "bundled "+l.spec.Bundled+" "+module+"\x00")
	} else {
		f, err := os.Open(l.library)
		if err != nil {
			return "", &GrammarLoadError{Language: l.id, Path: l.library, Err: err}
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return "", &GrammarLoadError{Language: l.id, Path: l.library, Err: err}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// bundledModule is the version and checksum of the module the bundled
// grammars come from, as the binary records it ("" when it does not).
func bundledModule() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/smacker/go-tree-sitter" {
			if d.Replace != nil {
				d = d.Replace
			}
			return d.Version + " " + d.Sum
		}
	}
	return ""
}
