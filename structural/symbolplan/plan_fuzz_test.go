package symbolplan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

var fuzzFiles = map[string]string{
	"a.go":   "package a\n\n// F is f.\nfunc F(x int) int {\n\treturn x\n}\n\ntype T struct {\n\tA int\n}\n\nfunc (t *T) M() {}\n",
	"p.py":   "class C:\n    \"\"\"Doc.\"\"\"\n\n    @staticmethod\n    def m():\n        \"\"\"M.\"\"\"\n        return 1\n\n\ndef f(): return 2\n",
	"t.ts":   "export class K {\n  /** m */\n  m(): number {\n    return 1;\n  }\n}\n\nexport const g = (x: number) => x + 1;\n",
	"r.rs":   "/// S\n#[derive(Debug)]\npub struct S { a: i32 }\n\nimpl S {\n    pub fn m(&self) -> i32 { self.a }\n}\n",
	"s.c":    "struct p {\n    int x;\n};\n\ntypedef struct { int y; } q;\n\nint f(void) { return 0; }\n",
	"J.java": "class J {\n    @Override\n    public String toString() {\n        return \"j\";\n    }\n}\n",
}

// Whatever the new text and operation, planning an edit of any definition
// (in six languages) does not panic, and a plan it makes changes the file and parses no worse
// than the file did.
func FuzzPlanSymbol(f *testing.F) {
	root := f.TempDir()
	for name, src := range fuzzFiles {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	g, err := pathguard.New(root)
	if err != nil {
		f.Fatal(err)
	}
	eng := astgrep.NewEngine(astgrep.Options{})
	defer eng.Close()
	x, err := index.New(g, eng, graph.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	x.Start(nil)
	if !x.Wait(context.Background(), time.Minute) {
		f.Fatal("the index did not build")
	}
	v := graph.NewViewer(x).View(0)
	var defs []graph.Located
	for name := range fuzzFiles {
		for line := 1; line < 12; line++ {
			locs, err := graph.Locate(v, graph.Spec{File: name, Line: line})
			if err == nil && locs[0].Line == line {
				defs = append(defs, locs[0])
			}
		}
	}
	if len(defs) < 10 {
		f.Fatalf("found %d definitions", len(defs))
	}
	ops := []string{"replace", "replace_body", "insert_before", "insert_after"}
	for _, seed := range []string{"return 0", "{\n}", "// c\nfunc G() {}", "@x\ndef h():\n  pass", "\t\n  ", "}{", `"""d"""`, "#[a]\nfn z() {}"} {
		f.Add(uint8(0), uint8(0), seed)
	}
	f.Fuzz(func(t *testing.T, which, op uint8, text string) {
		loc := defs[int(which)%len(defs)]
		abs := filepath.Join(root, loc.File)
		p, err := Make(context.Background(), eng, g, loc, abs, x.Languages().Lookup(loc.Language).Shapes(), Edit{Op: ops[int(op)%len(ops)], Text: text})
		if err != nil {
			return
		}
		if string(p.After) == string(p.Before) || p.StartLine < 1 || p.EndLine < p.StartLine || p.EndLine > strings.Count(string(p.After), "\n")+1 {
			t.Fatalf("plan %+v", p)
		}
		was, _ := eng.ParseErrorLines(eng.LanguageForFile(abs), p.Before)
		now, _ := eng.ParseErrorLines(eng.LanguageForFile(abs), p.After)
		if len(now) > len(was) {
			t.Fatalf("the plan parses worse:\n%s", p.After)
		}
	})
}
