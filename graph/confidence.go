package graph

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"
)

// confidence.json holds what the accuracy benchmarks measured of each
// edge class per language (bench/graphacc beside the language servers,
// bench/graphoracle beside a compiler's call graph), with the command,
// corpus, date and tree of each run. Every answer with edges carries the
// figures of the classes it holds, so an agent weighs an edge by what was
// measured of its class, not by its name.
//
//go:embed confidence.json
var confidenceJSON []byte

// confidenceFile is confidence.json.
type confidenceFile struct {
	About        string        `json:"about"`
	Measurements []measurement `json:"measurements"`
}

// measurement is one benchmark's figures for one language.
type measurement struct {
	Language string `json:"language"`
	// Against is the reference, short, as the text names it ("gopls").
	Against string `json:"against"`
	Corpus  string `json:"corpus"`
	Command string `json:"command"`
	Date    string `json:"date"`
	Tree    string `json:"tree"`
	// Classes: per class, the edges the reference confirmed of those
	// measured, and the recall the class (with the surer ones) reached.
	Classes map[string]classFigures `json:"classes"`
}

type classFigures struct {
	Right int `json:"right"`
	Of    int `json:"of"`
	// Found of Truth: the reference's sites this class and the surer ones
	// found (exact and import together; candidate: any class).
	Found      int    `json:"recall_found,omitempty"`
	Truth      int    `json:"recall_of,omitempty"`
	RecallWhat string `json:"recall_what,omitempty"`
}

var loadConfidence = sync.OnceValues(func() (confidenceFile, error) {
	var c confidenceFile
	if err := json.Unmarshal(confidenceJSON, &c); err != nil {
		return c, fmt.Errorf("graph/confidence.json: %w", err)
	}
	for _, m := range c.Measurements {
		for cls, f := range m.Classes {
			if f.Of <= 0 || f.Right < 0 || f.Right > f.Of || f.Truth < 0 || f.Found > f.Truth {
				return c, fmt.Errorf("graph/confidence.json: %s %s beside %s: right %d of %d, recall %d of %d", m.Language, cls, m.Against, f.Right, f.Of, f.Found, f.Truth)
			}
		}
	}
	return c, nil
})

// Confidence is what was measured of one class of edges in one language,
// given once per class an answer holds.
type Confidence struct {
	Language string    `json:"language"`
	Class    string    `json:"class" jsonschema:"a class of edges (exact, import, interface, implementation, candidate), or passed: the candidate calls of a parameter a function is passed to"`
	Measured []Measure `json:"measured" jsonschema:"each benchmark's figures for this class in this language (graph/confidence.json); empty: not measured"`
}

// Measure is one benchmark's figures for a class; confidence.json names
// the run's corpus, command and tree.
type Measure struct {
	Against   string  `json:"against" jsonschema:"the reference the edges were checked against: a language server's call hierarchy or a compiler's call graph (graph/confidence.json names the corpus and the command)"`
	Date      string  `json:"date"`
	Precision float64 `json:"precision" jsonschema:"the share of this class's edges the reference confirmed, 0 to 1"`
	Edges     int     `json:"edges" jsonschema:"edges of this class measured"`
	Recall    float64 `json:"recall,omitempty" jsonschema:"the share of the reference's call sites found by this class with the surer ones, 0 to 1 (recall_of says which)"`
	RecallOf  string  `json:"recall_of,omitempty" jsonschema:"what recall counts: exact and import edges together, or every class (candidates included), of the reference's sites or static calls"`
}

// langClass is a class of edges in a language.
type langClass struct{ lang, class string }

// confidenceOf gives the measured figures of each class in each language
// of the set, the surest class first. Unresolved calls claim no edge and are
// left out.
func confidenceOf(set map[langClass]bool) []Confidence {
	if len(set) == 0 {
		return nil
	}
	data, err := loadConfidence()
	keys := make([]langClass, 0, len(set))
	for k := range set {
		if k.class != Unresolved {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].lang != keys[j].lang {
			return keys[i].lang < keys[j].lang
		}
		return classOrder[keys[i].class] < classOrder[keys[j].class]
	})
	out := make([]Confidence, 0, len(keys))
	for _, k := range keys {
		c := Confidence{Language: k.lang, Class: k.class, Measured: []Measure{}}
		if err == nil {
			for _, m := range data.Measurements {
				f, ok := m.Classes[k.class]
				if m.Language != k.lang || !ok {
					continue
				}
				me := Measure{Against: m.Against, Date: m.Date, Edges: f.Of, Precision: share(f.Right, f.Of)}
				if f.Truth > 0 {
					me.Recall, me.RecallOf = share(f.Found, f.Truth), f.RecallWhat
				}
				c.Measured = append(c.Measured, me)
			}
		}
		out = append(out, c)
	}
	return out
}

// share is n of d to four places.
func share(n, d int) float64 { return math.Round(1e4*float64(n)/float64(d)) / 1e4 }

// classesOf is the set of (language, class) of sites.
func classesOf(sites ...[]Site) map[langClass]bool {
	set := map[langClass]bool{}
	for _, ss := range sites {
		for _, s := range ss {
			set[s.langClass()] = true
		}
	}
	return set
}

func (s Site) langClass() langClass {
	id := ""
	if s.fileRef != nil {
		id = s.fileRef.Lang.ID
	}
	if s.passed && s.Class == Candidate {
		return langClass{id, PassedClass}
	}
	return langClass{id, s.Class}
}

// PassedClass is the class confidence gives the candidates that are calls
// of a parameter a function is passed to (G(F); G calls its f), or of a
// field a constructor set to it: measured apart from name-only
// candidates, which they are not.
const PassedClass = "passed"
