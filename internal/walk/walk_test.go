package walk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// tree writes files (slash-separated names; a name ending in "/" is an
// empty folder) under a fresh root and returns its guard.
func tree(t *testing.T, files map[string]string) *pathguard.Guard {
	t.Helper()
	root := testenv.Tree(t, files)
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// list walks start (relative to the root; "" is the root) and returns the
// files' Rel, a TooLarge one marked " (too large)".
func list(t *testing.T, g *pathguard.Guard, start string, opts Options) []string {
	t.Helper()
	files, err := Files(context.Background(), g, filepath.Join(g.Root(), filepath.FromSlash(start)), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, f := range files {
		s := f.Rel
		if f.TooLarge {
			s += " (too large)"
		}
		if f.Abs != filepath.Join(g.Root(), filepath.FromSlash(f.Rel)) {
			t.Errorf("%s: Abs %s does not match Rel", f.Rel, f.Abs)
		}
		out = append(out, s)
	}
	return out
}

// walkAgrees walks the whole root and checks the files against want and,
// when git is installed, against git's own list of the files it does not
// ignore. Hidden entries and skipped folders, which git lists, are set
// aside.
func walkAgrees(t *testing.T, g *pathguard.Guard, want []string) {
	t.Helper()
	got := list(t, g, "", Options{})
	same(t, "walk", got, want)
	if _, err := exec.LookPath("git"); err != nil {
		t.Log("git not installed: not cross-checked")
		return
	}
	root := g.Root()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	run("init", "-q")
	t.Cleanup(func() { os.RemoveAll(filepath.Join(root, ".git")) })
	gitList := []string{}
	skip := skipSet(nil)
	for _, f := range strings.Split(run("-c", "core.quotePath=false", "ls-files", "-z", "--others", "--exclude-standard"), "\x00") {
		if f == "" {
			continue
		}
		left := false
		for _, c := range strings.Split(f, "/") {
			left = left || strings.HasPrefix(c, ".") || skip[c]
		}
		if !left {
			gitList = append(gitList, f)
		}
	}
	slices.Sort(gitList)
	if !slices.Equal(got, gitList) {
		t.Errorf("git disagrees:\nwalk %q\ngit  %q", got, gitList)
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

func TestHiddenSkippedAndNonRegularAreLeftOut(t *testing.T) {
	g := tree(t, map[string]string{
		"a.go":                   "",
		".hidden.go":             "",
		".git/config":            "",
		"vendor/v.go":            "",
		"node_modules/m/i.js":    "",
		"sub/__pycache__/x.pyc":  "",
		"sub/site-packages/s.py": "",
		"sub/b.go":               "",
		"target/t.rs":            "",
		"empty/":                 "",
	})
	same(t, "default", list(t, g, "", Options{}), []string{"a.go", "sub/b.go", "target/t.rs"})
	same(t, "SkipDirs and HiddenFiles", list(t, g, "", Options{SkipDirs: []string{"target"}, HiddenFiles: true}), []string{".hidden.go", "a.go", "sub/b.go"})
	same(t, "Want", list(t, g, "", Options{Want: func(name string) bool { return strings.HasSuffix(name, ".rs") }}), []string{"target/t.rs"})
	// A skipped or hidden folder named as the start is walked.
	same(t, "start in vendor", list(t, g, "vendor", Options{}), []string{"vendor/v.go"})
	same(t, "hidden start", list(t, g, ".git", Options{}), []string{".git/config"})
}

func TestNestedGitignore(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore":          "*.log\ngen/\n",
		"a.go":                "",
		"a.log":               "",
		"gen/x.go":            "",
		"sub/.gitignore":      "local.go\n",
		"sub/local.go":        "",
		"sub/kept.go":         "",
		"sub/deep/local.go":   "", // a pattern without a slash applies at any depth below its folder
		"sub/deep/b.log":      "",
		"other/local.go":      "", // but not beside its folder
		"other/gen":           "", // gen/ is for folders only
		"sub/deep/.gitignore": "# a comment\n\n   \n!b.log\n",
	})
	walkAgrees(t, g, []string{"a.go", "other/gen", "other/local.go", "sub/deep/b.log", "sub/kept.go"})
}

func TestNegation(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore":       "*.txt\n!keep.txt\nbuild/\n!build/inside.txt\nlogs/*\n!logs/wanted.txt\n",
		"a.txt":            "",
		"keep.txt":         "",
		"sub/keep.txt":     "",
		"sub/b.txt":        "",
		"build/inside.txt": "", // its folder is ignored: it cannot be re-included
		"logs/x.txt":       "",
		"logs/wanted.txt":  "", // logs/* ignores the files, not the folder
		"sub/.gitignore":   "!b.txt\n",
	})
	walkAgrees(t, g, []string{"keep.txt", "logs/wanted.txt", "sub/b.txt", "sub/keep.txt"})
}

func TestDirectoryOnlyAnchoredAndDoubleStar(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore": strings.Join([]string{
			"out/",           // folders named out, at any depth
			"/top.go",        // only beside this .gitignore
			"docs/**/*.md",   // ** spans zero or more folders
			"**/fixtures",    // at any depth
			"a/**/z.go",      // zero folders too
			"/anch/inner.go", // a slash inside anchors too
			"cache/**",       // everything inside
			"[!k]eep.go",     // git's negated class
			"trailing.go   ", // trailing spaces are dropped
			"space\\ ",       // unless escaped
			"\\#hash.go",     // an escaped # is a pattern
			"\\!bang.go",     // an escaped ! is a pattern
			"crlf.go\r",      // CRLF line ending
		}, "\n") + "\n",
		"top.go":              "",
		"sub/top.go":          "",
		"out/o.go":            "",
		"sub/out/o.go":        "",
		"sub/out.go":          "",
		"docs/a.md":           "",
		"docs/x/y/b.md":       "",
		"docs/c.go":           "",
		"x/fixtures/f.go":     "",
		"fixtures/g.go":       "",
		"a/z.go":              "",
		"a/b/c/z.go":          "",
		"a/keep.go":           "",
		"a/peep.go":           "",
		"anch/inner.go":       "",
		"sub/anch/inner.go":   "",
		"cache/c.go":          "",
		"trailing.go":         "",
		"space ":              "",
		"#hash.go":            "",
		"!bang.go":            "",
		"crlf.go":             "",
		"src/docs/readme.md":  "", // docs/** is anchored to the root
		"src/cache/kept.go":   "",
		"zzz/out/deep/o.go":   "",
		"zzz/file-named-out/": "",
	})
	walkAgrees(t, g, []string{
		"a/keep.go", "docs/c.go", "src/cache/kept.go", "src/docs/readme.md", "sub/anch/inner.go", "sub/out.go", "sub/top.go",
	})
}

func TestByteOrderMark(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore": "\xef\xbb\xbfa.go\n",
		"a.go":       "",
		"b.go":       "",
	})
	walkAgrees(t, g, []string{"b.go"})
}

func TestStartBelowRoot(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore":          "*.gen.go\n/sub/deep/skip/\n",
		"sub/.gitignore":      "mid.go\n",
		"sub/deep/a.go":       "",
		"sub/deep/a.gen.go":   "", // the root's .gitignore applies
		"sub/deep/mid.go":     "", // and so does the one in between
		"sub/deep/skip/s.go":  "", // anchored at the root
		"sub/deep/keep/k.go":  "",
		"sub/deep/.gitignore": "!mid.go\n", // a deeper file wins
		"gen/x.go":            "",
	})
	same(t, "start sub/deep", list(t, g, "sub/deep", Options{}), []string{"sub/deep/a.go", "sub/deep/keep/k.go", "sub/deep/mid.go"})
}

func TestIgnoredStartIsWalked(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore": "gen/\n",
		"a.go":       "",
		"gen/x.go":   "",
		"gen/y.go":   "",
	})
	same(t, "root", list(t, g, "", Options{}), []string{"a.go"})
	same(t, "gen", list(t, g, "gen", Options{}), []string{"gen/x.go", "gen/y.go"})
}

func TestSymlinksAreNotFollowed(t *testing.T) {
	g := tree(t, map[string]string{"a/b/f.go": "", "a/g.go": ""})
	root := g.Root()
	for link, target := range map[string]string{
		"a/b/loop":   "..",                     // a loop
		"a/self":     ".",                      // another
		"a/up":       root,                     // absolute, to the root
		"a/file.go":  "g.go",                   // a link to a file
		"a/outside":  os.TempDir(),             // out of the root
		"a/dangling": filepath.Join(root, "x"), // to nothing
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	same(t, "walk", list(t, g, "", Options{}), []string{"a/b/f.go", "a/g.go"})
}

func TestSizeLimitReportsTooLarge(t *testing.T) {
	g := tree(t, map[string]string{"small.go": "12345", "big.go": "123456", "exact.go": "1234"})
	same(t, "limit 5", list(t, g, "", Options{MaxFileSize: 5}), []string{"big.go (too large)", "exact.go", "small.go"})
	same(t, "no limit", list(t, g, "", Options{}), []string{"big.go", "exact.go", "small.go"})
}

func TestCancelStopsTheWalk(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("d%02d/f.go", i)] = ""
	}
	g := tree(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Files(ctx, g, g.Root(), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("already cancelled: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Walk(ctx, g, g.Root(), Options{}, func(e Entry) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("cancelled after 3 files: %d files, %v", n, err)
	}
}

func TestDirsDepthAndSkip(t *testing.T) {
	g := tree(t, map[string]string{
		"go.mod":          "",
		"a/package.json":  "",
		"a/b/c/d/x.toml":  "",
		"a/b/c/d/e/y.txt": "",
		"skipme/z.txt":    "",
	})
	var got []string
	err := Walk(context.Background(), g, g.Root(), Options{Dirs: true, MaxDepth: 4}, func(e Entry) error {
		s := fmt.Sprintf("%s@%d", e.Rel, e.Depth)
		if e.Dir {
			s += "/"
			if e.Rel == "skipme" {
				return SkipDir
			}
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "walk", got, []string{"a@1/", "a/b@2/", "a/b/c@3/", "a/b/c/d@4/", "a/b/c/d/x.toml@5", "a/package.json@2", "go.mod@1"})

	// SkipAll stops quietly; another error is returned.
	n := 0
	if err := Walk(context.Background(), g, g.Root(), Options{}, func(Entry) error { n++; return SkipAll }); err != nil || n != 1 {
		t.Fatalf("SkipAll: %d calls, %v", n, err)
	}
	boom := errors.New("boom")
	if err := Walk(context.Background(), g, g.Root(), Options{}, func(Entry) error { return boom }); err != boom {
		t.Fatalf("got %v, want boom", err)
	}
}

func TestStartErrors(t *testing.T) {
	g := tree(t, map[string]string{"f.go": ""})
	if _, err := Files(context.Background(), g, filepath.Join(g.Root(), "f.go"), Options{}); err == nil {
		t.Error("a file as the start: no error")
	}
	if _, err := Files(context.Background(), g, filepath.Join(g.Root(), "missing"), Options{}); err == nil {
		t.Error("a missing start: no error")
	}
	if _, err := Files(context.Background(), g, filepath.Dir(g.Root()), Options{}); !errors.Is(err, pathguard.ErrOutside) {
		t.Errorf("a start outside the root: %v", err)
	}
}

func TestUnreadableFolderIsLeftOut(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root reads every folder: run this test again as nobody.
		testenv.AsNobody(t, "TestUnreadableFolderIsLeftOut", nil)
		return
	}
	g := tree(t, map[string]string{"a.go": "", "locked/b.go": ""})
	locked := filepath.Join(g.Root(), "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	same(t, "walk", list(t, g, "", Options{}), []string{"a.go"})
}

func TestExcluded(t *testing.T) {
	g := tree(t, map[string]string{
		".gitignore":     "*.log\ngen/\n",
		"sub/.gitignore": "!keep.log\n",
	})
	root := g.Root()
	cases := []struct {
		path string
		dir  bool
		opts Options
		want bool
	}{
		{"a.go", false, Options{}, false},
		{"a.log", false, Options{}, true},
		{"sub/keep.log", false, Options{}, false},
		{"sub/other.log", false, Options{}, true},
		{"gen", true, Options{}, true},
		{"gen", false, Options{}, false}, // a file named gen
		{"gen/x.go", false, Options{}, true},
		{"vendor/x.go", false, Options{}, true},
		{"target/x.go", false, Options{}, false},
		{"target/x.go", false, Options{SkipDirs: []string{"target"}}, true},
		{".hidden/x.go", false, Options{}, true},
		{".clangd", false, Options{}, true},
		{".clangd", false, Options{HiddenFiles: true}, false},
		{"missing/deep/file.go", false, Options{}, false},
		{"", true, Options{}, false},
	}
	for _, c := range cases {
		if got := Excluded(g, filepath.Join(root, filepath.FromSlash(c.path)), c.dir, c.opts); got != c.want {
			t.Errorf("Excluded(%q, dir=%v, %+v) = %v, want %v", c.path, c.dir, c.opts, got, c.want)
		}
	}
	if !Excluded(g, filepath.Dir(root), true, Options{}) {
		t.Error("a path outside the root is not excluded")
	}
}
