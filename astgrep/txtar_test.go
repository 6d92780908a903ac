package astgrep

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/search/**/*.txtar")

// TestSearchCases runs every testdata/search/<lang>/*.txtar case: the
// archive's files are written to a fresh root, the pattern is searched,
// and the matches with their captures must equal the want section.
//
// Header lines (the archive comment) are "key: value": pattern, language,
// path (relative to the root), max_results. A "pattern" section holds a
// multi-line pattern instead. The want section lists one match per line,
// "file:start-end: text", each capture on an indented line below it, and
// ends with "total N"; or it is "error: <substring of the error>".
func TestSearchCases(t *testing.T) {
	files, err := filepath.Glob("testdata/search/*/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases found: %v", err)
	}
	e := newTestEngine(t)
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "testdata/search/"), ".txtar")
		t.Run(name, func(t *testing.T) {
			if strings.HasPrefix(name, "dart/") {
				dartGrammar(t)
			}
			runSearchCase(t, e, file)
		})
	}
}

// newTestEngine makes an Engine that knows the installed grammar folder
// (absent is fine: only Dart cases need it, and they check).
func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	e := NewEngine(Options{GrammarDirs: []string{filepath.Join(testenv.ToolsDir(), "grammars")}})
	t.Cleanup(func() { e.Close() })
	return e
}

// dartGrammar fails or skips t when the Dart grammar library is missing.
func dartGrammar(t testing.TB) string {
	t.Helper()
	return testenv.File(t, "tree-sitter-dart grammar", filepath.Join("grammars", "libtree-sitter-dart.so"))
}

type searchCase struct {
	pattern, language, path string
	maxResults              int
	files                   map[string][]byte
	want                    string
}

func parseSearchCase(t *testing.T, file string) (*txtar.Archive, searchCase) {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := searchCase{files: map[string][]byte{}, maxResults: 1000}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "pattern":
			c.pattern = v
		case "language":
			c.language = v
		case "path":
			c.path = v
		case "max_results":
			c.maxResults, _ = strconv.Atoi(v)
		}
	}
	for _, f := range ar.Files {
		switch f.Name {
		case "want":
			c.want = string(f.Data)
		case "pattern":
			c.pattern = strings.TrimRight(string(f.Data), "\n")
		default:
			c.files[f.Name] = f.Data
		}
	}
	if c.pattern == "" && !strings.Contains(c.want, "error:") {
		t.Fatalf("%s: no pattern", file)
	}
	return ar, c
}

func runSearchCase(t *testing.T, e *Engine, file string) {
	ar, c := parseSearchCase(t, file)
	root := t.TempDir()
	testenv.WriteTree(t, root, c.files)
	q := Query{Path: at(root), Pattern: c.pattern, Language: c.language, MaxResults: c.maxResults}
	if c.path != "" {
		q.Path = at(root, filepath.Join(root, filepath.FromSlash(c.path)))
	}
	res, err := e.Search(context.Background(), q)
	got := formatResult(res, err)
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "want" {
				if strings.HasPrefix(c.want, "error:") && err != nil {
					return // error wants are written by hand
				}
				ar.Files[i].Data = []byte(got)
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, ok := strings.CutPrefix(strings.TrimSpace(c.want), "error:"); ok {
		if err == nil {
			t.Fatalf("want an error containing %q, got matches:\n%s", strings.TrimSpace(want), got)
		}
		if !strings.Contains(err.Error(), strings.TrimSpace(want)) {
			t.Fatalf("want an error containing %q, got: %v", strings.TrimSpace(want), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("search %q: %v", c.pattern, err)
	}
	if got != c.want {
		t.Errorf("pattern %q (read as %s, %s)\ngot:\n%s\nwant:\n%s", c.pattern, res.Language, res.Context, got, c.want)
	}
}

func formatResult(res *Result, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "%s:%d-%d: %s\n", m.File, m.StartLine, m.EndLine, escapeNL(m.Text))
		names := make([]string, 0, len(m.Captures))
		for k := range m.Captures {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c := m.Captures[k]
			prefix := "$"
			if c.Multi {
				prefix = "$$$"
			}
			fmt.Fprintf(&b, "  %s%s = %s\n", prefix, k, escapeNL(c.Text))
		}
	}
	fmt.Fprintf(&b, "total %d\n", res.Total)
	return b.String()
}

func escapeNL(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }
