// Package langtest loads the code graph's bundled languages for tests of
// what reads them (the snapshot, the resolver), on an engine the test's
// end closes. It is for tests only.
package langtest

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/lang"
)

// Bundled is the bundled languages, loaded on an engine closed when the
// test ends.
func Bundled(t testing.TB) *lang.Set {
	t.Helper()
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	s, err := lang.Load(e)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
