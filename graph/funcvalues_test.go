package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestHeldCallsInCallers checks that callers of a function lists the
// calls made through a local bound to it (f := G; f()), with the class
// callees gives them: a candidate in Go and TypeScript, where a later
// f = … is not in the records; exact or import in Python.
func TestHeldCallsInCallers(t *testing.T) {
	for _, c := range []struct {
		fixture, symbol string
		want            []string // file:line class
	}{
		{"go_funcvalues", "app.G", []string{"app/app.go:11 candidate", "app/app.go:24 candidate"}},
		{"go_funcvalues", "util.F", []string{"app/app.go:13 candidate"}},
		{"go_funcvalues", "util.Store.Save", []string{"app/app.go:15 candidate"}},
		{"go_funcvalues", "app.T.Cd", []string{"app/app.go:66 candidate"}},
		{"python_funcvalues", "app.g", []string{"app.py:14 exact"}},
		{"python_funcvalues", "helper", []string{"app.py:16 import"}},
		{"python_funcvalues", "Store.save", []string{"app.py:25 exact"}},
		{"python_modvars", "Store", []string{"app.py:20 exact"}},
		{"typescript_funcvalues", "app.g", []string{"app.ts:11 candidate"}},
		{"typescript_funcvalues", "lib", []string{"plain.js:5 candidate"}},
	} {
		t.Run(c.fixture+"/"+c.symbol, func(t *testing.T) {
			got := map[string]bool{}
			for _, s := range fixtureCallers(t, "testdata/fixtures/"+c.fixture+".txtar", c.symbol) {
				got[fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Class)] = true
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("callers of %s: no call %s; got %v", c.symbol, w, got)
				}
			}
		})
	}
}

// TestPassedCallsInCallers checks that callers of a function passed to a
// known callee lists the callee's calls of the parameter it is passed as,
// as candidates saying who passes it, and no call of another variable of
// that name (a closure's own parameter).
func TestPassedCallsInCallers(t *testing.T) {
	for _, c := range []struct {
		fixture, symbol string
		want, not       []string // file:line class
	}{
		{"go_passed", "app.F", []string{"app/app.go:9 candidate", "app/app.go:21 candidate", "util/util.go:5 candidate"}, []string{"app/app.go:28 candidate"}},
		{"python_passed", "app.f", []string{"app.py:7 candidate", "app.py:24 candidate", "app.py:36 candidate"}, nil},
		{"typescript_passed", "app.f", []string{"app.ts:6 candidate", "lib.ts:2 candidate"}, nil},
		// Handed on: the last callee's call, not a closure's own
		// parameter, not a parameter bound again before it is handed on.
		{"go_passed_on", "app.F", []string{"app/app.go:7 candidate", "app/app.go:9 candidate", "app/app.go:11 candidate", "app/app.go:19 candidate", "app/app.go:27 candidate", "util/util.go:5 candidate"}, []string{"app/app.go:35 candidate"}},
		{"python_passed_on", "app.f", []string{"app.py:6 candidate", "app.py:10 candidate", "app.py:14 candidate", "app.py:31 candidate"}, []string{"app.py:48 candidate", "app.py:49 candidate"}},
		{"c_passed", "f", []string{"app.c:4 candidate", "app.c:5 candidate", "app.c:9 candidate"}, nil},
		{"cpp_passed", "f", []string{"app.cpp:8 candidate", "app.cpp:19 candidate"}, nil},
		{"rust_passed", "f", []string{"src/lib.rs:5 candidate", "src/lib.rs:25 candidate"}, nil},
		// Stored by a constructor: its class's calls of the field.
		{"python_ctor", "app.f", []string{"app.py:11 candidate"}, []string{"app.py:14 candidate"}},
		{"typescript_ctor", "app.f", []string{"app.ts:9 candidate"}, nil},
		{"typescript_passed_on", "app.f", []string{"lib.ts:2 candidate", "app.ts:6 candidate", "app.ts:23 candidate"}, nil},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			got := map[string]bool{}
			a := fixtureAnswer(t, "testdata/impact/"+c.fixture+".txtar", c.symbol)
			for _, s := range slices.Concat(a.Sites, a.Values) {
				got[fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Class)] = true
				if s.Class == "candidate" && !strings.Contains(s.Reason, "passes ") {
					t.Errorf("callers of %s: %s:%d's reason does not say who passes it: %q", c.symbol, s.File, s.Line, s.Reason)
				}
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("callers of %s: no call %s; got %v", c.symbol, w, got)
				}
			}
			// Their confidence is the passed class's, not name-only
			// candidates'.
			if !slices.ContainsFunc(a.Confidence, func(c Confidence) bool { return c.Class == PassedClass }) {
				t.Errorf("callers of %s: no confidence of the passed class: %+v", c.symbol, a.Confidence)
			}
			for _, w := range c.not {
				if got[w] {
					t.Errorf("callers of %s: %s listed; it calls another variable", c.symbol, w)
				}
			}
		})
	}
}

// fixtureCallers is the callers answer's sites for symbol in the fixture
// at path, indexed whole.
func fixtureCallers(t *testing.T, path, symbol string) []Site {
	t.Helper()
	return fixtureAnswer(t, path, symbol).Sites
}

// fixtureAnswer is the callers answer for symbol in the fixture at path,
// indexed whole.
func fixtureAnswer(t *testing.T, path, symbol string) *Answer {
	t.Helper()
	a, err := buildFixture(t, readArchive(t, path)).Callers(Spec{Symbol: symbol}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
