package graph

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/languages"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// TestConfidenceData checks confidence.json: it parses, each measurement
// says against what, on what corpus, by which command, when and on which
// tree, its languages and classes are the graph's, and the languages the
// accuracy benchmarks measure have figures for exact edges.
func TestConfidenceData(t *testing.T) {
	data, err := loadConfidence()
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]bool{}
	dirs, _ := fs.ReadDir(languages.FS, ".")
	for _, d := range dirs {
		if d.IsDir() {
			langs[d.Name()] = true
		}
	}
	exact := map[string]bool{}
	for _, m := range data.Measurements {
		if m.Against == "" || m.Corpus == "" || m.Command == "" || m.Date == "" || m.Tree == "" {
			t.Errorf("%s beside %q: every measurement needs against, corpus, command, date and tree: %+v", m.Language, m.Against, m)
		}
		if !langs[m.Language] {
			t.Errorf("measurement of %q: not a language of graph/languages", m.Language)
		}
		for cls, f := range m.Classes {
			if _, ok := classOrder[cls]; !ok || cls == Unresolved {
				t.Errorf("%s beside %s: class %q is not an edge class", m.Language, m.Against, cls)
			}
			if (f.Truth > 0) != (f.RecallWhat != "") {
				t.Errorf("%s %s beside %s: a recall needs recall_what, and recall_what a recall", m.Language, cls, m.Against)
			}
		}
		if _, ok := m.Classes[Exact]; ok {
			exact[m.Language] = true
		}
	}
	for _, l := range []string{"go", "typescript", "javascript", "python", "c"} {
		if !exact[l] {
			t.Errorf("no measured figures for exact edges on %s (bench/graphacc measures it)", l)
		}
	}
}

// TestAnswersCarryConfidence asks callers, callees and impact of every
// function and method of the fixtures and checks that each answer carries
// the measured figures once for every class (and language) of edges it
// holds, and for no other.
func TestAnswersCarryConfidence(t *testing.T) {
	for _, name := range []string{"go", "go_dispatch", "python", "typescript", "javascript_cjs", "c", "rust"} {
		t.Run(name, func(t *testing.T) {
			x := fixture(t, name)
			v := x.view(0)
			asked, measured := 0, 0
			for f := range v.Snap.Files() {
				for i := range f.Defs {
					d := &f.Defs[i]
					if d.Kind != "function" && d.Kind != "method" {
						continue
					}
					spec := Spec{File: f.Rel, Line: int(d.Line), Symbol: d.Name}
					for _, op := range []string{"callers", "callees", "impact"} {
						var a *Answer
						var err error
						var want map[langClass]bool
						switch op {
						case "callers":
							a, err = Callers(v, spec)
						case "callees":
							a, err = Callees(v, spec)
						case "impact":
							a, err = Impact(v, spec, 2, 0)
						}
						if err != nil || len(a.Candidates) > 0 {
							continue
						}
						if op == "impact" {
							var vias []Site
							for _, r := range a.Depths {
								for _, dep := range r.Dependents {
									vias = append(vias, dep.Via)
								}
							}
							want = classesOf(vias)
						} else {
							want = classesOf(a.Sites, a.Values)
						}
						delete(want, langClass{f.Lang.ID, Unresolved})
						asked++
						checkConfidence(t, op+" "+snap.Target{File: f, Def: int32(i)}.Qualified(), a, want)
						for _, c := range a.Confidence {
							if len(c.Measured) > 0 {
								measured++
							}
						}
					}
				}
			}
			if asked == 0 {
				t.Fatal("no question asked")
			}
			if name != "rust" && measured == 0 {
				t.Errorf("%d answers, none with measured figures", asked)
			}
		})
	}
}

func checkConfidence(t *testing.T, what string, a *Answer, want map[langClass]bool) {
	t.Helper()
	got := map[langClass]int{}
	for _, c := range a.Confidence {
		got[langClass{c.Language, c.Class}]++
		for _, m := range c.Measured {
			if m.Precision < 0 || m.Precision > 1 || m.Edges <= 0 || m.Against == "" || m.Date == "" {
				t.Errorf("%s: %s on %s: a measure out of range or unsourced: %+v", what, c.Class, c.Language, m)
			}
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("%s: class %s on %s is in the answer; its confidence is given %d times, want once", what, k.class, k.lang, got[k])
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("%s: confidence of %s on %s, a class the answer does not hold", what, k.class, k.lang)
		}
	}
	if slices.ContainsFunc(a.Confidence, func(c Confidence) bool { return c.Class == Unresolved }) {
		t.Errorf("%s: unresolved calls claim no edge; no confidence for them", what)
	}
}
