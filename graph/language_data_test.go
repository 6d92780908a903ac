package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// A language added as data (a folder under testdata/languages passed as
// Options.QueryDirs, no Go code) resolves declared types as a bundled one
// does: its typeforms.scm reads them as structure. Each archive under
// testdata/dataonly is checked like a fixture: its expect lines, and its
// golden dump.
func TestLanguageAsData(t *testing.T) {
	paths, err := filepath.Glob("testdata/dataonly/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no archives: %v", err)
	}
	dirs, err := filepath.Abs("testdata/languages")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			for _, f := range ar.Files {
				if f.Name == "expect" {
					continue
				}
				fp := filepath.Join(root, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(fp, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			x := buildRootOpts(t, root, Options{QueryDirs: []string{dirs}})
			dump := x.Dump()
			checkDump(t, p, ar, dump)
		})
	}
}
