package astgrep

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"golang.org/x/tools/txtar"
)

// flattenCorpus is source in every language the tests have: the search
// cases' files (all bundled languages and Dart), the cross-check fixtures,
// and Go from GOROOT/src (all of it without -short). Each file also
// comes damaged (cut in the middle, a line doubled, brackets dropped), so
// trees full of ERROR and MISSING nodes are compared too.
func flattenCorpus(t *testing.T, e *Engine) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	add := func(name string, data []byte) {
		l := e.langs.forFile(name)
		if l == nil || l.load() != nil {
			return
		}
		out[l.id] = append(out[l.id], data)
		if len(data) > 20 {
			half := len(data) / 2
			cut := data[:half]
			out[l.id] = append(out[l.id], cut)
			lines := bytes.SplitAfter(data, []byte("\n"))
			mid := len(lines) / 2
			doubled := slices.Concat(bytes.Join(lines[:mid+1], nil), lines[mid], bytes.Join(lines[mid+1:], nil))
			out[l.id] = append(out[l.id], doubled)
			out[l.id] = append(out[l.id], bytes.Map(func(r rune) rune {
				if strings.ContainsRune(")}]", r) {
					return -1
				}
				return r
			}, data))
		}
	}
	archives, _ := filepath.Glob(filepath.Join("testdata", "search", "*", "*.txtar"))
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			add(f.Name, f.Data)
		}
	}
	// Roots, and how many files of each -short (or -race, which
	// multiplies the two flattens' cost) reads (0: all).
	roots := []struct {
		dir   string
		short int
	}{
		{filepath.Join("testdata", "crosscheck"), 0},
		{filepath.Join("..", "graph", "testdata"), 0},
		{filepath.Join("..", "lsp", "testdata"), 0},
		{filepath.Join(goroot(), "src"), 400},
		{"/usr/lib/python3.11", 150},
		{filepath.Join(testenv.ToolsDir(), "node_modules"), 200},
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/smacker/go-tree-sitter").Output(); err == nil {
		roots = append(roots, struct {
			dir   string
			short int
		}{strings.TrimSpace(string(out)), 150})
	}
	for _, r := range roots {
		n := 0
		filepath.WalkDir(r.dir, func(p string, d os.DirEntry, err error) error {
			if (testing.Short() || raceEnabled) && r.short > 0 && n >= r.short {
				return fs.SkipAll
			}
			if err != nil || d.IsDir() {
				return nil
			}
			if e.langs.forFile(p) == nil {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > 256<<10 || !info.Mode().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err == nil {
				n++
				add(p, data)
			}
			return nil
		})
	}
	return out
}

// The flatten that reads the parse's subtrees directly gives exactly the
// nodes the cursor's walk gives: kinds, spans, fields, flags and subtree
// ends, in every language the tests have, clean and damaged.
func TestFlattenDirectEqualsCursor(t *testing.T) {
	e := NewEngine(Options{GrammarDirs: []string{filepath.Join(testenv.ToolsDir(), "grammars")}})
	defer e.Close()
	p := procpool.Parser()
	defer procpool.PutParser(p)
	corpus := flattenCorpus(t, e)
	if len(corpus) < 20 {
		t.Errorf("only %d languages in the corpus", len(corpus))
	}
	for lang, files := range corpus {
		l := e.langs.lookup(lang)
		nodes, withErrors := 0, 0
		for i, src := range files {
			direct, cursor, err := p.ParseBothWays(l.g, src)
			if err != nil {
				t.Errorf("%s file %d: %v", lang, i, err)
				continue
			}
			nodes += len(cursor)
			if !slices.Equal(direct, cursor) {
				for j := range max(len(direct), len(cursor)) {
					if j >= len(direct) || j >= len(cursor) || direct[j] != cursor[j] {
						var d, c tsnative.Node
						if j < len(direct) {
							d = direct[j]
						}
						if j < len(cursor) {
							c = cursor[j]
						}
						t.Errorf("%s file %d (%d bytes): node %d differs: direct %+v (%s), cursor %+v (%s); %d vs %d nodes",
							lang, i, len(src), j, d, l.symbolName(d.Sym), c, l.symbolName(c.Sym), len(direct), len(cursor))
						break
					}
				}
				continue
			}
			tr := &tree{src: src, nodes: cursor}
			if tr.errorCount() > 0 {
				withErrors++
			}
		}
		t.Logf("%-10s %6d files (%5d with errors) %9d nodes", lang, len(files), withErrors, nodes)
	}
}
