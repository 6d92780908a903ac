package graph

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// A language added as data (a folder under testdata/languages passed as
// Options.QueryDirs, no Go code) resolves declared types as a bundled one
// does: its typeforms.scm reads them as structure. Each archive under
// testdata/dataonly is checked like a fixture: its expect lines, and its
// golden dump.
func TestLanguageAsData(t *testing.T) {
	dirs, err := filepath.Abs("testdata/languages")
	if err != nil {
		t.Fatal(err)
	}
	eachArchive(t, "testdata/dataonly/*.txtar", func(t *testing.T, p string, ar *txtar.Archive) {
		checkDump(t, p, ar, buildFixtureOpts(t, ar, Options{QueryDirs: []string{dirs}}).Dump())
	})
}
