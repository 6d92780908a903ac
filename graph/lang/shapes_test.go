package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// Every bundled language has its shapes: its own shapes.scm, or (tsx) the
// one of the language it extends, with the layout its language.json says.
func TestBundledShapes(t *testing.T) {
	_, s := bundled(t)
	for _, id := range s.IDs() {
		sh := s.Lookup(id).Shapes()
		if sh == nil || !strings.Contains(sh.Query, "@body") || len(sh.Comments) == 0 {
			t.Errorf("%s: shapes %+v", id, sh)
		}
	}
	tsx := s.Lookup("tsx").Shapes()
	if !strings.Contains(tsx.Query, "arrow_function") || !strings.Contains(tsx.Query, "interface_declaration") || tsx.Indent != "  " || tsx.Grammar != "tsx" {
		t.Errorf("tsx does not have typescript's shapes: %+v", tsx)
	}
	if g := s.Lookup("go").Shapes(); g.Indent != "\t" || len(g.Attributes) != 0 || !g.BracedBodies {
		t.Errorf("go: %+v", g)
	}
	py := s.Lookup("python").Shapes()
	if py.BracedBodies || py.Docstring == nil || !py.Docstring.MatchString(`rb"""x"""`) || py.Docstring.MatchString("x = 1") || py.Comments[0] != "#" {
		t.Errorf("python: %+v", py)
	}
}

// A language added at run time gets shapes from its folder; a mistake in
// them, or any key language.json does not have, stops the load with the
// file and what to fix.
func TestShapesFromQueryDirs(t *testing.T) {
	e := astgrep.NewEngine(astgrep.Options{})
	defer e.Close()
	tags := "(function_statement name: (function_name (identifier) @name)) @definition.function\n"
	load := func(files map[string]string) (*Set, error) {
		qd := t.TempDir()
		testenv.WriteTree(t, qd, files)
		return Load(e, qd)
	}
	s, err := load(map[string]string{
		"lua/language.json":  `{"grammar": "lua", "indent": "  ", "comments": ["--"], "braced_bodies": false}`,
		"lua/tags.scm":       tags,
		"lua/shapes.scm":     "(function_statement (function_body) @body) @def\n",
		"bare/language.json": `{"grammar": "lua"}`,
		"bare/tags.scm":      tags,
	})
	if err != nil {
		t.Fatal(err)
	}
	if sh := s.Lookup("lua").Shapes(); sh == nil || sh.Indent != "  " || sh.Comments[0] != "--" || sh.BracedBodies || sh.Grammar != "lua" {
		t.Fatalf("lua: %+v", sh)
	}
	if sh := s.Lookup("bare").Shapes(); sh != nil {
		t.Fatalf("a language with no shapes.scm has shapes: %+v", sh)
	}
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"lua/language.json": `{"grammar": "lua", "indnet": "  "}`, "lua/tags.scm": tags},
			`language lua: language.json: json: unknown field "indnet"`},
		{map[string]string{"lua/language.json": `{"grammar": "lua"}`, "lua/tags.scm": tags, "lua/shapes.scm": "(function_statement (function_body) @bdy) @def\n"},
			"language lua: shapes.scm: capture @bdy is none of @def, @body, @outer, @inner, @doc"},
		{map[string]string{"lua/language.json": `{"grammar": "lua"}`, "lua/tags.scm": tags, "lua/shapes.scm": "(function_statement nam: (function_body) @body) @def\n"},
			"language lua: shapes.scm: lua query, line 1"},
		{map[string]string{"lua/language.json": `{"grammar": "lua", "shapes": ["mine.scm"]}`, "lua/tags.scm": tags},
			"language lua: open lua/mine.scm"},
		{map[string]string{"lua/language.json": `{"grammar": "lua", "indent": "\t\t"}`, "lua/tags.scm": tags, "lua/shapes.scm": "(function_body) @body\n"},
			`language lua: indent "\t\t" is neither spaces nor one tab`},
		{map[string]string{"lua/language.json": `{"grammar": "lua", "docstring": "("}`, "lua/tags.scm": tags, "lua/shapes.scm": "(function_body) @body\n"},
			"language lua: docstring: error parsing regexp"},
	} {
		if _, err := load(c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.files, err, c.want)
		}
	}
}

// Every bundled language.json key is one langConfig reads: with the
// strict load, a key no code reads could not be shipped.
func TestBundledLanguageJSONIsStrict(t *testing.T) {
	dirs, err := os.ReadDir("../languages")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		if _, _, err := readConfig(os.DirFS("../languages"), d.Name(), 0); err != nil {
			t.Errorf("%s: %v", filepath.Join("..", "languages", d.Name()), err)
		}
	}
}
