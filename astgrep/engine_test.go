package astgrep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/pathguard"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func TestBinaryAndHugeFilesAreSkippedAndCounted(t *testing.T) {
	huge := "package p\n\nfunc f() {\n" + strings.Repeat("\tpanic(1)\n", 3000) + "}\n"
	root := testenv.Tree(t, map[string]string{
		"a.go":      "package p\n\nfunc f() { panic(0) }\n",
		"bin.go":    "package p\x00\x01\x02 panic(2)",
		"huge.go":   huge,
		"small.go":  "package p\n\nfunc g() { panic(3) }\n",
		"other.txt": "panic(4)",
	})
	e := NewEngine(Options{MaxFileSize: 4096})
	defer e.Close()
	res, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "panic($X)"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || res.FilesScanned != 4 || res.FilesSkipped != 2 {
		t.Fatalf("total %d scanned %d skipped %d, want 2, 4, 2; %+v", res.Total, res.FilesScanned, res.FilesSkipped, res.Skipped)
	}
	reasons := map[string]string{}
	for _, s := range res.Skipped {
		reasons[s.File] = s.Reason
	}
	if reasons["bin.go"] != "binary" || !strings.HasPrefix(reasons["huge.go"], "too large") {
		t.Fatalf("skip reasons: %v", reasons)
	}
}

// A search takes its location only from a path guard: a location outside
// the root cannot be made, and a query without one is refused.
func TestPathOutsideRoot(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"in/a.go": "package p\n"})
	e := NewEngine(Options{})
	defer e.Close()
	g, err := pathguard.New(filepath.Join(root, "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, p := range []string{filepath.Dir(root), filepath.Join(root, "in", "..", ".."), "/etc/passwd"} {
		if _, err := g.Path(p); !errors.Is(err, pathguard.ErrOutside) {
			t.Errorf("path %s: got %v, want pathguard.ErrOutside", p, err)
		}
	}
	if _, err := e.Search(context.Background(), Query{Pattern: "f($X)", Language: "go"}); !errors.Is(err, pathguard.ErrNoPath) {
		t.Errorf("a query with no Path: %v", err)
	}
}

func TestUnknownLanguageListsKnownOnes(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package p\n", "x.weird": "f(1)\n"})
	e := NewEngine(Options{GrammarDirs: []string{"/nowhere/grammars"}})
	defer e.Close()
	_, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "f($X)", Language: "fortran"})
	var ule *UnknownLanguageError
	if !errors.As(err, &ule) {
		t.Fatalf("got %v, want *UnknownLanguageError", err)
	}
	if !slices.Contains(ule.Known, "go") || !slices.Contains(ule.Known, "python") {
		t.Fatalf("known languages %v lack go or python", ule.Known)
	}
	for _, want := range []string{"fortran", "libtree-sitter-<id>.so", "/nowhere/grammars", "go, "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// A single file whose name says nothing.
	_, err = e.Search(context.Background(), Query{Path: at(root, filepath.Join(root, "x.weird")), Pattern: "f($X)"})
	if !errors.As(err, &ule) || !strings.Contains(err.Error(), "pass language") {
		t.Fatalf("got %v, want an UnknownLanguageError asking for language", err)
	}
	// With language given, the odd name is fine.
	res, err := e.Search(context.Background(), Query{Path: at(root, filepath.Join(root, "x.weird")), Pattern: "f($X)", Language: "python"})
	if err != nil || res.Total != 1 {
		t.Fatalf("search x.weird as python: %v, %+v", err, res)
	}
}

func TestUnparsablePatternNamesContexts(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.py": "x = 1\n"})
	e := NewEngine(Options{})
	defer e.Close()
	_, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "def (:", Language: "python"})
	var upe *UnparsablePatternError
	if !errors.As(err, &upe) {
		t.Fatalf("got %v, want *UnparsablePatternError", err)
	}
	if len(upe.Contexts) < 3 || upe.Contexts[0] != "bare fragment" || upe.Language != "python" {
		t.Fatalf("contexts %v language %s", upe.Contexts, upe.Language)
	}
}

func TestEmptyAndLoneMetavariablePatterns(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package p\n"})
	e := NewEngine(Options{})
	defer e.Close()
	for pat, want := range map[string]error{"": ErrEmptyPattern, "  \n\t": ErrEmptyPattern, "$$$A": ErrOnlyMetavariable, " $X ": ErrOnlyMetavariable, "$$$": ErrOnlyMetavariable, "$_": ErrOnlyMetavariable} {
		_, err := e.Search(context.Background(), Query{Path: at(root), Pattern: pat, Language: "go"})
		if !errors.Is(err, want) {
			t.Errorf("pattern %q: got %v, want %v", pat, err, want)
		}
	}
}

// buildGrammar compiles C source into a shared library with gcc.
func buildGrammar(t *testing.T, dir, id, csrc string) string {
	t.Helper()
	gcc := testenv.LookPath(t, "gcc")
	src := filepath.Join(t.TempDir(), id+".c")
	if err := os.WriteFile(src, []byte(csrc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "libtree-sitter-"+id+".so")
	if msg, err := exec.Command(gcc, "-shared", "-fPIC", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	return out
}

func TestBrokenGrammarLibraries(t *testing.T) {
	dir := t.TempDir()
	// Not a shared library at all.
	if err := os.WriteFile(filepath.Join(dir, "libtree-sitter-junk.so"), []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A library whose language claims ABI 99 (the version is the first
	// field of TSLanguage).
	buildGrammar(t, dir, "future", "static const unsigned int lang[64] = {99};\nconst void *tree_sitter_future(void) { return lang; }\n")
	// A library without the expected symbol.
	buildGrammar(t, dir, "nosym", "int something_else(void) { return 1; }\n")

	root := testenv.Tree(t, map[string]string{"a.junk": "x", "a.future": "x", "a.nosym": "x", "a.go": "package p\n\nfunc f() { g(1) }\n"})
	e := NewEngine(Options{GrammarDirs: []string{dir}})
	defer e.Close()
	for _, id := range []string{"junk", "future", "nosym"} {
		if !slices.Contains(e.Languages(), id) {
			t.Errorf("Languages() lacks %s: %v", id, e.Languages())
		}
		_, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "x", Language: id})
		var gle *GrammarLoadError
		if !errors.As(err, &gle) || gle.Language != id {
			t.Fatalf("%s: got %v, want *GrammarLoadError", id, err)
		}
		t.Logf("%s: %v", id, err)
	}
	if _, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "x", Language: "future"}); !strings.Contains(fmt.Sprint(err), "ABI version 99") {
		t.Errorf("wrong-ABI error does not say so: %v", err)
	}
	// Other languages keep working, with language given or inferred.
	res, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "g($X)", Language: "go"})
	if err != nil || res.Total != 1 {
		t.Fatalf("go search next to broken grammars: %v %+v", err, res)
	}
	res, err = e.Search(context.Background(), Query{Path: at(root), Pattern: "g($X)"})
	if err != nil || res.Total != 1 || res.Language != "go" {
		t.Fatalf("inferred search next to broken grammars: %v %+v", err, res)
	}
}

func TestDartGrammarLoadsFromFolder(t *testing.T) {
	so := dartGrammar(t)
	e := NewEngine(Options{GrammarDirs: []string{filepath.Dir(so)}})
	defer e.Close()
	if !slices.Contains(e.Languages(), "dart") {
		t.Fatalf("Languages() = %v, want dart among them", e.Languages())
	}
	if got := e.LanguageForFile("lib/main.dart"); got != "dart" {
		t.Fatalf("LanguageForFile(main.dart) = %q", got)
	}
	// Without the folder Dart is unknown, and the error says how to add it.
	e2 := NewEngine(Options{})
	defer e2.Close()
	root := testenv.Tree(t, map[string]string{"a.dart": "void main() { dispose(x); }\n"})
	_, err := e2.Search(context.Background(), Query{Path: at(root, filepath.Join(root, "a.dart")), Pattern: "dispose($X)"})
	var ule *UnknownLanguageError
	if !errors.As(err, &ule) {
		t.Fatalf("got %v, want *UnknownLanguageError", err)
	}
}

func TestCacheServesSecondQueryAndNoticesEdits(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"a.go": "package p\n\nfunc f() {\n\tdefer a.Close()\n}\n",
		"b.go": "package p\n\nfunc g() {\n\tdefer b.Close()\n}\n",
	})
	e := NewEngine(Options{})
	defer e.Close()
	q := Query{Path: at(root), Pattern: "defer $X.Close()"}
	first, err := e.Search(context.Background(), q)
	if err != nil || first.Total != 2 || first.FilesCached != 0 {
		t.Fatalf("first: %v %+v", err, first)
	}
	second, err := e.Search(context.Background(), q)
	if err != nil || second.Total != 2 || second.FilesCached != 2 {
		t.Fatalf("second: %v %+v", err, second)
	}
	// Change one file (size changes too, so coarse mtimes cannot hide it).
	p := filepath.Join(root, "b.go")
	if err := os.WriteFile(p, []byte("package p\n\nfunc g() {\n\tdefer b.Close()\n\tdefer c.Close()\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := e.Search(context.Background(), q)
	if err != nil || third.Total != 3 || third.FilesCached != 1 {
		t.Fatalf("third: %v %+v", err, third)
	}
	// A cache of size zero is off.
	off := NewEngine(Options{CacheBytes: -1})
	defer off.Close()
	for i := 0; i < 2; i++ {
		r, err := off.Search(context.Background(), q)
		if err != nil || r.FilesCached != 0 || r.Total != 3 {
			t.Fatalf("cache off, run %d: %v %+v", i, err, r)
		}
	}
}

// callTree is a root of n Go files, each calling g once.
func callTree(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%03d.go", i)] = "package p\n\nfunc f() { g(1) }\n"
	}
	return testenv.Tree(t, files)
}

func TestCancellation(t *testing.T) {
	root := callTree(t, 200)
	e := NewEngine(Options{})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Search(ctx, Query{Path: at(root), Pattern: "g($X)"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestProgressReportsFinalCount(t *testing.T) {
	root := callTree(t, 30)
	e := NewEngine(Options{})
	defer e.Close()
	var calls [][2]int
	res, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "g($X)", Progress: func(done, total int) {
		calls = append(calls, [2]int{done, total})
	}})
	if err != nil || res.Total != 30 {
		t.Fatalf("%v %+v", err, res)
	}
	if len(calls) == 0 || calls[len(calls)-1] != [2]int{30, 30} {
		t.Fatalf("progress calls %v, want the last to be (30, 30)", calls)
	}
}

func TestConcurrentSearchesShareOneEngine(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("d%d/f%02d.go", i%4, i)] = fmt.Sprintf("package p\n\nfunc f%d() {\n\tdefer x.Close()\n\ty := %d\n\t_ = y\n}\n", i, i)
	}
	root := testenv.Tree(t, files)
	e := NewEngine(Options{Workers: 3})
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			pat, want := "defer $X.Close()", 40
			if i%2 == 1 {
				pat = "$A := $B"
			}
			res, err := e.Search(context.Background(), Query{Path: at(root), Pattern: pat})
			if err == nil && res.Total != want {
				err = fmt.Errorf("%s: total %d, want %d", pat, res.Total, want)
			}
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClosedEngineRefuses(t *testing.T) {
	e := NewEngine(Options{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := e.Search(context.Background(), Query{Path: at(t.TempDir()), Pattern: "f()", Language: "go"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
}

// TestPrefilterNeverDropsAMatch reruns every txtar case with the literal
// prefilter off and expects the same result.
func TestPrefilterNeverDropsAMatch(t *testing.T) {
	files, _ := filepath.Glob("testdata/search/*/*.txtar")
	e := newTestEngine(t)
	for _, file := range files {
		if strings.HasPrefix(file, "testdata/search/dart/") {
			if _, err := os.Stat(filepath.Join(testenv.ToolsDir(), "grammars", "libtree-sitter-dart.so")); err != nil {
				continue
			}
		}
		_, c := parseSearchCase(t, file)
		if strings.HasPrefix(strings.TrimSpace(c.want), "error:") {
			continue
		}
		root := t.TempDir()
		testenv.WriteTree(t, root, c.files)
		q := Query{Path: at(root), Pattern: c.pattern, Language: c.language, MaxResults: 1000}
		if c.path != "" {
			q.Path = at(root, filepath.Join(root, filepath.FromSlash(c.path)))
		}
		with, err := e.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		e.noPrefilter = true
		procCache.Clear()
		without, err := e.Search(context.Background(), q)
		e.noPrefilter = false
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if a, b := formatResult(with, nil), formatResult(without, nil); a != b {
			t.Errorf("%s: prefilter changed the result:\nwith:\n%s\nwithout:\n%s", file, a, b)
		}
	}
}

func TestLexPattern(t *testing.T) {
	cases := []struct {
		in   string
		want string // parts, metavariables as <name,multi>
	}{
		{"f($A, $$$B)", "f(|<A>|, |<$$$B>|)"},
		{"$X == $X", "<X>| == |<X>"},
		{"$_ + $_", "<_0>| + |<_1>"},
		{"$$$", "<$$$_0>"},
		{"$foo + $Bar", "$foo + $Bar"},
		{"$$x", "$$x"},
		{"$$$$A", "$|<$$$A>"},
		{"a$", "a$"},
	}
	for _, c := range cases {
		lx, err := lexPattern(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var parts []string
		for _, p := range lx.parts {
			switch v := p.(type) {
			case string:
				parts = append(parts, v)
			case mvRef:
				name := v.name
				if name == "" {
					name = fmt.Sprintf("_%d", v.index)
				}
				if v.multi {
					name = "$$$" + name
				}
				parts = append(parts, "<"+name+">")
			}
		}
		if got := strings.Join(parts, "|"); got != c.want {
			t.Errorf("lex %q = %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := lexPattern("f($A, $$$A)"); err == nil {
		t.Error("$A and $$$A in one pattern should be refused")
	}
}

func TestTrimText(t *testing.T) {
	long := strings.Repeat("line\n", 20)
	got := trimText(long)
	if strings.Count(got, "\n") != maxShownLines-1 || !strings.Contains(got, "more lines") {
		t.Fatalf("trimText: %q", got)
	}
	if trimText("short") != "short" {
		t.Fatal("short text changed")
	}
	wide := strings.Repeat("é", 1000)
	if got := trimText(wide); len(got) > maxShownBytes+40 || !bytes.HasSuffix([]byte(got), []byte("more lines)")) {
		t.Fatalf("wide trim: %d bytes", len(got))
	}
}

// The walk follows git: a deeper .gitignore's !pattern re-includes a file
// a shallower one ignored (nothing in an ignored folder can be), and the
// .gitignore files above Path apply.
func TestWalkFollowsGitPrecedence(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		".gitignore":        "*_gen.go\nout/\n",
		"a_gen.go":          "package p\n\nfunc f() { panic(1) }\n",
		"sub/.gitignore":    "!keep_gen.go\n!out/\n",
		"sub/keep_gen.go":   "package p\n\nfunc f() { panic(2) }\n",
		"sub/drop_gen.go":   "package p\n\nfunc f() { panic(3) }\n",
		"sub/out/o.go":      "package p\n\nfunc f() { panic(4) }\n",
		"out/x/keep_gen.go": "package p\n\nfunc f() { panic(5) }\n",
	})
	e := NewEngine(Options{})
	defer e.Close()
	for _, c := range []struct {
		path string
		want []string
	}{
		{"", []string{"sub/keep_gen.go", "sub/out/o.go"}},
		{"sub", []string{"sub/keep_gen.go", "sub/out/o.go"}},
	} {
		res, err := e.Search(context.Background(), Query{Path: at(root, filepath.Join(root, c.path)), Pattern: "panic($X)"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.File)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("path %q: matches in %v, want %v", c.path, got, c.want)
		}
	}
}
