package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// N3: which paths are a repository's metadata, and which of those git
// executes. Every write tool commits through WriteAll, so lsp_rename,
// which passes no exec approval, is refused like the others.
func TestGitMetadata(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	testenv.WriteTree(t, root, map[string]string{
		".git/HEAD":                   "ref: refs/heads/main\n",
		".git/objects/":               "",
		".git/refs/":                  "",
		"bare/HEAD":                   "ref: refs/heads/main\n", // a bare repository under any name
		"bare/objects/":               "",
		"bare/refs/":                  "",
		"wt/.git":                     "gitdir: ../meta/worktrees/wt\n", // a linked worktree of a repository without a working tree
		"meta/HEAD":                   "ref: refs/heads/main\n",
		"meta/objects/":               "",
		"meta/refs/":                  "",
		"meta/worktrees/wt/HEAD":      "ref: refs/heads/wt\n",
		"meta/worktrees/wt/commondir": "../..\n",
		"gd/.git":                     "gitdir: inner\n", // names a folder below it, not (yet) a git folder
		"half/HEAD":                   "x\n",             // HEAD and objects, no refs yet
		"half/objects/":               "",
	})
	t.Setenv("GIT_DIR", filepath.Join(root, "envgit"))
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, tc := range []struct {
		rel        string
		meta, exec bool
	}{
		{"a.txt", false, false},
		{"src/.gitignore", false, false},
		{".gitmodules", false, false},
		{"git/config", false, false},
		{".git/config", true, true},
		{".git/hooks/pre-commit", true, true},
		{".git/info/attributes", true, true},
		{".git/info/exclude", true, true},
		{".git/modules/sub/refs/x", true, true},
		{".git/HEAD", true, false},
		{".git/refs/heads/main", true, false},
		{".git/description", true, false},
		{"sub/.git", true, true}, // a gitdir: redirect
		{"sub/.Git/config", true, true},
		{"x/.git/objects/ab", true, false},
		{"bare/config", true, true},
		{"bare/refs/tags/v1", true, false},
		{"meta/worktrees/wt/HEAD", true, true}, // under worktrees/ of its common dir
		{"meta/worktrees/wt/commondir", true, true},
		{"meta/config", true, true}, // the worktree's common dir
		{"wt/a.txt", false, false},
		{"gd/inner/config", true, true},
		{"half/config", false, false},
		{"half/refs/x", true, false}, // would make half/ a git folder
		{"half/commondir", true, true},
		{"envgit/hooks/x", true, true},
	} {
		m, ok := gitMetadata(g, filepath.Join(root, tc.rel), fixedGitDirs(g))
		if ok != tc.meta || m.exec != tc.exec {
			t.Errorf("%s: metadata %v (in %s), exec %v; want %v, %v", tc.rel, ok, m.dir, m.exec, tc.meta, tc.exec)
		}
	}

	// The commit plan: refused unless the guard allows it; then what git
	// executes needs exec approval, which a caller without one (nil, as
	// lsp_rename passes) cannot give.
	hook := Change{Path: filepath.Join(root, ".git", "hooks", "pre-commit"), Data: []byte("#!/bin/sh\n")}
	head := Change{Path: filepath.Join(root, ".git", "description"), Data: []byte("x\n")}
	plain := Change{Path: filepath.Join(root, "a.txt"), Data: []byte("a\n")}
	if _, err := WriteAll(g, []Change{plain, head}, Options{Force: true}); !errors.Is(err, ErrGitMetadata) || !errors.Is(err, ErrUnchanged) {
		t.Fatalf("metadata without AllowGitWrites: %v", err)
	}
	if _, err := os.Stat(plain.Path); err == nil {
		t.Fatal("the commit wrote part of a refused change")
	}
	g.AllowGitWrites()
	if _, err := WriteAll(g, []Change{plain, head}, Options{}); err != nil {
		t.Fatalf("data in .git with AllowGitWrites: %v", err)
	}
	if _, err := WriteAll(g, []Change{hook}, Options{Force: true}); !errors.Is(err, ErrGitExec) {
		t.Fatalf("a hook without exec approval: %v", err)
	}
	var asked []string
	no := errors.New("exec=deny")
	if _, err := WriteAll(g, []Change{plain, hook}, Options{ApproveExec: func(p []string) error { asked = p; return no }}); !errors.Is(err, ErrGitExec) || !errors.Is(err, no) ||
		len(asked) != 1 || asked[0] != ".git/hooks/pre-commit" {
		t.Fatalf("a hook, approval refused: %v (asked %v)", err, asked)
	}
	if _, err := WriteAll(g, []Change{hook}, Options{ApproveExec: func([]string) error { return nil }}); err != nil {
		t.Fatalf("a hook, approved: %v", err)
	}
}
