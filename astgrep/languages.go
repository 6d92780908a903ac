package astgrep

import (
	"maps"
	"path/filepath"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/astgrep/langtable"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// language is a grammar ready to use (or the reason it is not).
type language struct {
	spec      langtable.Spec
	id        string
	library   string // shared library path for run-time grammars
	once      sync.Once
	ts        tsnative.Language
	g         *tsnative.Grammar
	err       error
	namesOnce sync.Once
	names     []string        // symbol names by id
	keywords  map[string]bool // word-like unnamed tokens: func, select, class
	printOnce sync.Once
	print     string // GrammarFingerprint
	printErr  error
}

func (l *language) load() error {
	l.once.Do(func() {
		if l.spec.Bundled != "" {
			ts, ok := tsnative.Bundled(l.spec.Bundled)
			if !ok {
				panic("astgrep: langtable's bundled grammar " + l.spec.Bundled + " is not linked in tsnative")
			}
			l.ts = ts
			l.g = tsnative.NewGrammar(ts)
			return
		}
		sym := "tree_sitter_" + strings.ReplaceAll(l.id, "-", "_")
		ts, err := tsnative.LoadShared(l.library, sym)
		if err != nil {
			l.err = &GrammarLoadError{Language: l.id, Path: l.library, Err: err}
			return
		}
		l.ts = ts
		l.g = tsnative.NewGrammar(ts)
	})
	return l.err
}

func (l *language) symbolName(sym uint16) string {
	l.loadNames()
	if int(sym) < len(l.names) {
		return l.names[sym]
	}
	return l.ts.SymbolName(sym)
}

func (l *language) loadNames() {
	l.namesOnce.Do(func() {
		n := l.ts.SymbolCount()
		l.names = make([]string, n)
		l.keywords = map[string]bool{}
		for i := 0; i < n; i++ {
			l.names[i] = l.ts.SymbolName(uint16(i))
			if l.ts.SymbolAnonymous(uint16(i)) && isKeywordSpelling(l.names[i]) {
				l.keywords[l.names[i]] = true
			}
		}
	})
}

// isKeyword reports whether s is spelled like one of the grammar's keywords.
func (l *language) isKeyword(s string) bool {
	l.loadNames()
	return l.keywords[s]
}

func isKeywordSpelling(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// languageSet is the table of languages one Engine knows: the bundled
// grammars plus the shared libraries found in its grammar folders.
type languageSet struct {
	byID   map[string]*language
	alias  map[string]*language
	byExt  map[string]*language
	byName map[string]*language
}

// bundledSet holds the bundled grammars, shared by every Engine: a
// language is immutable once loaded, so engines need not load, name or
// hold it each on their own.
var bundledSet = sync.OnceValue(func() *languageSet {
	s := &languageSet{
		byID:   map[string]*language{},
		alias:  map[string]*language{},
		byExt:  map[string]*language{},
		byName: map[string]*language{},
	}
	for _, sp := range langtable.Table {
		if sp.Bundled != "" {
			s.add(&language{spec: sp, id: sp.ID})
		}
	}
	return s
})

// newLanguageSet returns the bundled grammars plus those in grammarDirs.
// Without grammar folders it is the shared bundled set, which nothing
// changes.
func newLanguageSet(grammarDirs []string) *languageSet {
	base := bundledSet()
	if len(grammarDirs) == 0 {
		return base
	}
	s := &languageSet{
		byID:   maps.Clone(base.byID),
		alias:  maps.Clone(base.alias),
		byExt:  maps.Clone(base.byExt),
		byName: maps.Clone(base.byName),
	}
	var specs map[string]langtable.Spec
	// Shared libraries: the first folder that holds a grammar wins.
	for _, dir := range grammarDirs {
		entries, err := filepath.Glob(filepath.Join(dir, "libtree-sitter-*"+sharedLibExt))
		if err != nil {
			continue
		}
		for _, p := range entries {
			id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "libtree-sitter-"), sharedLibExt)
			if id == "" || s.byID[id] != nil {
				continue
			}
			if specs == nil {
				specs = map[string]langtable.Spec{}
				for _, sp := range langtable.Table {
					specs[sp.ID] = sp
				}
			}
			sp, ok := specs[id]
			if !ok || sp.Bundled != "" {
				sp = langtable.Generic(id)
			}
			sp.Bundled = ""
			s.add(&language{spec: sp, id: id, library: p})
		}
	}
	return s
}

const sharedLibExt = ".so"

func (s *languageSet) add(l *language) {
	s.byID[l.id] = l
	for _, a := range l.spec.Aliases {
		s.alias[a] = l
	}
	for _, e := range l.spec.Exts {
		if _, taken := s.byExt[e]; !taken {
			s.byExt[e] = l
		}
	}
	for _, n := range l.spec.Names {
		s.byName[n] = l
	}
}

// lookup finds a language by id or alias, case-insensitively.
func (s *languageSet) lookup(name string) *language {
	n := strings.ToLower(strings.TrimSpace(name))
	if l := s.byID[n]; l != nil {
		return l
	}
	return s.alias[n]
}

// forFile picks a file's language by name, then by extension.
func (s *languageSet) forFile(path string) *language {
	base := filepath.Base(path)
	if l := s.byName[base]; l != nil {
		return l
	}
	return s.byExt[strings.ToLower(filepath.Ext(base))]
}
