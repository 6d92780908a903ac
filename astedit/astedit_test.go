package astedit

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want/ sections of testdata/rewrite/*.txtar")

func newEngine(t testing.TB) *astgrep.Engine {
	t.Helper()
	e := astgrep.NewEngine(astgrep.Options{GrammarDirs: []string{filepath.Join(testenv.ToolsDir(), "grammars")}})
	t.Cleanup(func() { e.Close() })
	return e
}

func readFile(t testing.TB, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRewriteCases runs testdata/rewrite/*.txtar: header keys pattern,
// rewrite, language (or "pattern"/"rewrite" sections for multi-line ones);
// the other files form the tree; after staging and accepting, every file
// named want/<file> must hold that content, every other file must be
// unchanged. An "error" section instead holds a substring of the error
// Stage must return.
func TestRewriteCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/rewrite/*.txtar")
	if len(files) == 0 {
		t.Fatal("no rewrite cases")
	}
	e := newEngine(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			if strings.HasPrefix(name, "dart_") {
				testenv.File(t, "tree-sitter-dart grammar", filepath.Join("grammars", "libtree-sitter-dart.so"))
			}
			runRewriteCase(t, e, file)
		})
	}
}

func runRewriteCase(t *testing.T, e *astgrep.Engine, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pattern, rewrite, language, wantErr string
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "pattern":
			pattern = strings.TrimSpace(v)
		case "rewrite":
			rewrite = strings.TrimSpace(v)
		case "language":
			language = strings.TrimSpace(v)
		}
	}
	src := map[string]string{}
	want := map[string]string{}
	for _, f := range ar.Files {
		switch {
		case f.Name == "pattern":
			pattern = strings.TrimRight(string(f.Data), "\n")
		case f.Name == "rewrite":
			rewrite = strings.TrimRight(string(f.Data), "\n")
		case f.Name == "error":
			wantErr = strings.TrimSpace(string(f.Data))
		case strings.HasPrefix(f.Name, "want/"):
			want[strings.TrimPrefix(f.Name, "want/")] = string(f.Data)
		default:
			src[f.Name] = string(f.Data)
		}
	}
	root := testenv.Tree(t, src)
	st := NewStager(e)
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: pattern, Language: language}, rewrite)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Stage: got %v, want an error containing %q", err, wantErr)
		}
		for name, data := range src {
			if got := readFile(t, root, name); got != data {
				t.Errorf("%s changed although staging failed", name)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("Stage(%q -> %q): %v", pattern, rewrite, err)
	}
	// Staging writes nothing.
	for name, data := range src {
		if got := readFile(t, root, name); got != data {
			t.Fatalf("%s changed at staging", name)
		}
	}
	if p.ID != "edit_1" || len(p.Files) == 0 {
		t.Fatalf("proposal %s with %d files", p.ID, len(p.Files))
	}
	if _, err := st.Resolve(context.Background(), p.ID, true, atomicfile.Options{}); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if *update {
		var kept []txtar.File
		for _, f := range ar.Files {
			if !strings.HasPrefix(f.Name, "want/") {
				kept = append(kept, f)
			}
		}
		for name := range src {
			if got := readFile(t, root, name); got != src[name] {
				kept = append(kept, txtar.File{Name: "want/" + name, Data: []byte(got)})
			}
		}
		ar.Files = kept
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for name, data := range src {
		exp, changed := want[name]
		if !changed {
			exp = data
		}
		if got := readFile(t, root, name); got != exp {
			t.Errorf("%s after accept:\n%s\nwant:\n%s\ndiff staged:\n%s", name, got, exp, p.Diff)
		}
	}
}

const goSrc = `package p

func f(a, b *os.File) {
	defer a.Close()
	defer b.Close()
}
`

const goWant = `package p

func f(a, b *os.File) {
	defer mustClose(a)
	defer mustClose(b)
}
`

func TestAcceptWritesAndKeepsMode(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc, "b/b.go": goSrc, "c.go": "package p\n"})
	if err := os.Chmod(filepath.Join(root, "a.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := NewStager(newEngine(t))
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "edit_1" || len(p.Replacements) != 4 || len(p.Files) != 2 {
		t.Fatalf("proposal %s: %d replacements in %d files", p.ID, len(p.Replacements), len(p.Files))
	}
	if f := p.Files[0]; f.File != "a.go" || f.Replacements != 2 || !slices.Equal(f.Lines, []int{4, 5}) {
		t.Errorf("first file %s: %d replacements at %v", f.File, f.Replacements, f.Lines)
	}
	for _, want := range []string{"--- a/a.go", "+++ b/a.go", "-\tdefer a.Close()", "+\tdefer mustClose(a)"} {
		if !strings.Contains(p.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, p.Diff)
		}
	}
	if got := st.Pending(); len(got) != 1 || got[0] != "edit_1" {
		t.Fatalf("pending %v", got)
	}
	out, err := st.Resolve(context.Background(), "edit_1", true, atomicfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Accepted || out.Replacements != 4 || len(out.Files) != 2 {
		t.Fatalf("outcome %+v", out)
	}
	for _, f := range []string{"a.go", "b/b.go"} {
		if got := readFile(t, root, f); got != goWant {
			t.Errorf("%s:\n%s", f, got)
		}
	}
	info, err := os.Stat(filepath.Join(root, "a.go"))
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("mode after accept: %v %v", info.Mode(), err)
	}
	if _, err := st.Resolve(context.Background(), "edit_1", true, atomicfile.Options{}); !errors.Is(err, ErrAlreadyResolved) || !strings.Contains(err.Error(), "accepted") {
		t.Fatalf("second accept: %v", err)
	}
	// The next staged edit gets the next id.
	p2, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer mustClose($X)", Language: "go"}, "defer $X.Close()")
	if err != nil || p2.ID != "edit_2" {
		t.Fatalf("second stage: %v %+v", err, p2)
	}
}

func TestDiscardWritesNothing(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc})
	st := NewStager(newEngine(t))
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Resolve(context.Background(), p.ID, false, atomicfile.Options{})
	if err != nil || out.Accepted {
		t.Fatalf("discard: %v %+v", err, out)
	}
	if got := readFile(t, root, "a.go"); got != goSrc {
		t.Fatalf("discard changed the file:\n%s", got)
	}
	if _, err := st.Resolve(context.Background(), p.ID, true, atomicfile.Options{}); !errors.Is(err, ErrAlreadyResolved) || !strings.Contains(err.Error(), "discarded") {
		t.Fatalf("accept after discard: %v", err)
	}
	if _, err := st.Resolve(context.Background(), "edit_99", true, atomicfile.Options{}); !errors.Is(err, ErrUnknownEdit) || !strings.Contains(err.Error(), "none are pending") {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestFileChangedAfterStagingRejectsAll(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc, "b.go": goSrc})
	st := NewStager(newEngine(t))
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(goSrc, "func f", "// edited by hand\nfunc f", 1)
	if err := os.WriteFile(filepath.Join(root, "b.go"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = st.Resolve(context.Background(), p.ID, true, atomicfile.Options{})
	var stale *StaleError
	if !errors.As(err, &stale) || len(stale.Files) != 1 || stale.Files[0] != "b.go" {
		t.Fatalf("got %v, want a StaleError naming b.go", err)
	}
	if got := readFile(t, root, "a.go"); got != goSrc {
		t.Fatalf("a.go was written although the edit was rejected:\n%s", got)
	}
	if got := readFile(t, root, "b.go"); got != edited {
		t.Fatalf("b.go lost the hand edit:\n%s", got)
	}
	// A deleted file is a change too.
	p2, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "a.go"))
	if _, err := st.Resolve(context.Background(), p2.ID, true, atomicfile.Options{}); !errors.As(err, &stale) {
		t.Fatalf("after delete: %v", err)
	}
	if got := readFile(t, root, "b.go"); got != edited {
		t.Fatal("b.go written although a.go disappeared")
	}
}

// TestWriteFailureRestoresEverything makes the second of three writes fail
// for real: its name is so long that the temporary file next to it
// ("."+name+".tmp-NNN") exceeds the file-name limit, which stops even
// root.
func TestWriteFailureRestoresEverything(t *testing.T) {
	// The middle file's rewrite is over the file size limit set around
	// Resolve, so its write fails after the first file was written.
	big := goSrc + "\n// " + strings.Repeat("x", 1536<<10) + "\n"
	root := testenv.Tree(t, map[string]string{"a.go": goSrc, "m.go": big, "z.go": goSrc})
	st := NewStager(newEngine(t))
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 3 || p.Files[1].File != "m.go" {
		t.Fatalf("files %v: m.go should be written second", p.Files)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1 << 20, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	_, err = st.Resolve(context.Background(), p.ID, true, atomicfile.Options{})
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || !strings.Contains(err.Error(), "still staged") {
		t.Fatalf("got %v, want a write failure", err)
	}
	for f, want := range map[string]string{"a.go": goSrc, "m.go": big, "z.go": goSrc} {
		if got := readFile(t, root, f); got != want {
			t.Errorf("%s was left changed", f)
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	// Still staged: it can be discarded.
	if _, err := st.Resolve(context.Background(), p.ID, false, atomicfile.Options{}); err != nil {
		t.Fatalf("discard after failed accept: %v", err)
	}
}

func TestRewriteThatBreaksParsingIsRefused(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc})
	st := NewStager(newEngine(t))
	_, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}, "defer $X.Close(")
	var pbe *ParseBreakError
	if !errors.As(err, &pbe) || len(pbe.Files) != 1 || pbe.Files[0].File != "a.go" || len(pbe.Files[0].Lines) == 0 {
		t.Fatalf("got %v, want a ParseBreakError for a.go with lines", err)
	}
	if !strings.Contains(err.Error(), "a.go (syntax errors at line") {
		t.Fatalf("error does not name file and line: %v", err)
	}
	if len(st.Pending()) != 0 {
		t.Fatal("a refused rewrite was staged")
	}
	// A file that already had errors may keep them.
	broken := goSrc + "\nfunc (\n"
	root2 := testenv.Tree(t, map[string]string{"a.go": broken})
	if _, err := st.Stage(context.Background(), astgrep.Query{Path: at(root2), Pattern: "defer $X.Close()", Language: "go"}, "defer mustClose($X)"); err != nil {
		t.Fatalf("rewrite in a file with old errors: %v", err)
	}
}

func TestOverlapsOutermostWins(t *testing.T) {
	src := "package p\n\nfunc f() {\n\tg := func() {\n\t\tx := 1\n\t\t_ = x\n\t}\n\ty := 2\n\t_, _ = g, y\n}\n"
	root := testenv.Tree(t, map[string]string{"a.go": src})
	st := NewStager(newEngine(t))
	p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "$X := $Y", Language: "go"}, "var $X = $Y")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Replacements) != 2 || len(p.Dropped) != 1 || p.Dropped[0].StartLine != 5 {
		t.Fatalf("replacements %d dropped %+v", len(p.Replacements), p.Dropped)
	}
	if _, err := st.Resolve(context.Background(), p.ID, true, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nfunc f() {\n\tvar g = func() {\n\t\tx := 1\n\t\t_ = x\n\t}\n\tvar y = 2\n\t_, _ = g, y\n}\n"
	if got := readFile(t, root, "a.go"); got != want {
		t.Fatalf("got:\n%s", got)
	}
}

func TestTemplateAndSearchErrors(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": goSrc})
	st := NewStager(newEngine(t))
	q := astgrep.Query{Path: at(root), Pattern: "defer $X.Close()", Language: "go"}
	cases := map[string]string{
		"defer close($Y)":      "uses $Y, which the pattern does not capture (it captures $X)",
		"defer close($_)":      "binds nothing",
		"defer close($$$ARGS)": "uses $$$ARGS, which the pattern does not capture",
	}
	for rw, want := range cases {
		_, err := st.Stage(context.Background(), q, rw)
		var te *TemplateError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), want) {
			t.Errorf("rewrite %q: got %v, want %q", rw, err, want)
		}
	}
	_, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "nothing.Here($X)", Language: "go"}, "x($X)")
	if !errors.Is(err, ErrNoMatches) {
		t.Errorf("no matches: %v", err)
	}
	_, err = st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "", Language: "go"}, "x")
	if !errors.Is(err, astgrep.ErrEmptyPattern) {
		t.Errorf("empty pattern: %v", err)
	}
	if len(st.Pending()) != 0 {
		t.Fatal("failed stages left edits pending")
	}
}

func TestReindent(t *testing.T) {
	cases := []struct{ text, from, to, want string }{
		{"a\n\tb\n\tc", "\t", "\t\t", "a\n\t\tb\n\t\tc"},
		{"a\n        b", "        ", "    ", "a\n    b"},
		{"a\n\n\tb", "\t", "  ", "a\n\n  b"},
		{"a\nb", "\t", "\t\t", "a\nb"},
	}
	for _, c := range cases {
		if got := reindent(c.text, c.from, c.to); got != c.want {
			t.Errorf("reindent(%q, %q, %q) = %q, want %q", c.text, c.from, c.to, got, c.want)
		}
	}
}

// R9: a rewrite that leaves Python indentation Python refuses (which
// tree-sitter-python takes) is refused like any other break.
func TestRewriteThatBreaksPythonIndentationIsRefused(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"m.py": "def f(x):\n    return x\n"})
	st := NewStager(newEngine(t))
	_, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: "return $X", Language: "python"}, "y = $X\n  return y")
	var pbe *ParseBreakError
	if !errors.As(err, &pbe) || len(pbe.Files) != 1 || pbe.Files[0].File != "m.py" {
		t.Fatalf("got %v, want a ParseBreakError for m.py", err)
	}
	if len(st.Pending()) != 0 {
		t.Fatal("a refused rewrite was staged")
	}
}
