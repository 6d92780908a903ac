package main

import (
	"bufio"
	"go/build"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// What the graph's Dump says, parsed: every definition, and the call and
// value references by file:line.

type def struct {
	Rel       string
	Line      int
	EndLine   int
	Kind      string
	Qualified string
	Name      string
	Container string
}

type dumpRef struct {
	Kind string // call, value
	Call string // receiver.name as the index read it
	Name string
	Line string // the whole Dump line
}

type dump struct {
	files map[string]string // rel -> language id
	defs  []def
	kinds map[string]string    // "dir\x00Name" -> kind of a type definition
	refs  map[string][]dumpRef // "rel:line"
}

func key(rel string, line int) string { return rel + ":" + strconv.Itoa(line) }

func parseDump(text string) *dump {
	d := &dump{files: map[string]string{}, kinds: map[string]string{}, refs: map[string][]dumpRef{}}
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		kind, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch kind {
		case "file":
			f := strings.Fields(rest)
			if len(f) >= 2 {
				d.files[f[0]] = f[1]
			}
		case "def":
			// def rel:line-end kind qualified
			f := strings.Fields(rest)
			if len(f) < 3 {
				continue
			}
			loc := f[0]
			c := strings.LastIndexByte(loc, ':')
			if c < 0 {
				continue
			}
			rel := loc[:c]
			a, b, _ := strings.Cut(loc[c+1:], "-")
			ln, _ := strconv.Atoi(a)
			end, _ := strconv.Atoi(b)
			q := f[2]
			parts := strings.Split(q, ".")
			df := def{Rel: rel, Line: ln, EndLine: end, Kind: f[1], Qualified: q, Name: parts[len(parts)-1]}
			if (df.Kind == "method" || df.Kind == "getter") && len(parts) >= 2 {
				df.Container = parts[len(parts)-2]
			}
			d.defs = append(d.defs, df)
			switch df.Kind {
			case "interface", "struct", "type", "class":
				d.kinds[path.Dir(rel)+"\x00"+df.Name] = df.Kind
			}
		case "call", "value":
			// call rel:line recv.name in encl -> resolution
			loc, rest2, _ := strings.Cut(rest, " ")
			c := strings.LastIndexByte(loc, ':')
			if c < 0 {
				continue
			}
			call, _, _ := strings.Cut(rest2, " ")
			d.refs[loc] = append(d.refs[loc], dumpRef{Kind: kind, Call: call, Name: trailingIdent(call), Line: line})
		}
	}
	return d
}

func trailingIdent(s string) string {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			break
		}
		i -= n
	}
	return s[i:]
}

// named returns the references at rel:line called name.
func (d *dump) named(rel string, line int, name string) []dumpRef {
	var out []dumpRef
	for _, r := range d.refs[key(rel, line)] {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// lang holds what differs between languages.
type lang struct {
	id         string
	server     string
	args       []string
	env        []string // added to the server's environment
	spec       string   // the row of langserver.Table it runs as
	rootAtTop  bool     // the root is the server's, with no project file in it
	n          int
	defaultDir func() string
	// target says whether a definition's file may hold a target (not a
	// test, not test data).
	target func(rel string) bool
}

var langs = map[string]*lang{
	// gopls leaves cgo packages (net, os/user, ...) out of its
	// cross-package references when cgo is on: with CGO_ENABLED=1,
	// `gopls references` of internal/bytealg.IndexByteString lists nothing
	// in net/*.go, with CGO_ENABLED=0 it lists 22 sites there. So the
	// server runs without cgo, and the scope follows.
	"go": {id: "go", server: "gopls", args: []string{"serve"}, env: []string{"CGO_ENABLED=0"}, spec: "gopls", n: 50,
		defaultDir: func() string {
			out, err := exec.Command("go", "env", "GOROOT").Output()
			if err != nil {
				return ""
			}
			return filepath.Join(strings.TrimSpace(string(out)), "src")
		},
		target: func(rel string) bool {
			return !strings.HasSuffix(rel, "_test.go") && !hasDir(rel, "testdata")
		}},
	"python": {id: "python", server: "pyright-langserver", args: []string{"--stdio"}, spec: "pyright", rootAtTop: true, n: 30,
		defaultDir: func() string { return "/usr/lib/python3.11" },
		target: func(rel string) bool {
			base := path.Base(rel)
			return !strings.HasPrefix(base, "test_") && !strings.HasSuffix(base, "_test.py") &&
				!hasDir(rel, "test") && !hasDir(rel, "tests") && !hasDir(rel, "testdata") && !hasDir(rel, "idle_test")
		}},
	// clangd with its background index (cross-file callers come from it),
	// on a tree bench/graphacc.sh gives a compile_commands.json.
	"c": {id: "c", server: "clangd", args: []string{"--background-index", "--log=error"}, spec: "clangd", n: 30,
		defaultDir: func() string { return "" },
		target:     func(rel string) bool { return !hasDir(rel, "test") && !hasDir(rel, "tests") }},
	// JavaScript through the same server, with a jsconfig.json.
	"javascript": {id: "javascript", server: "typescript-language-server", args: []string{"--stdio"}, spec: "typescript-language-server", n: 30,
		defaultDir: func() string { return "" },
		target: func(rel string) bool {
			base := path.Base(rel)
			return !strings.Contains(base, ".test.") && !strings.Contains(base, ".spec.") && !strings.HasSuffix(base, ".min.js") &&
				!hasDir(rel, "test") && !hasDir(rel, "tests") && !hasDir(rel, "__tests__") && !hasDir(rel, "benchmarks") && !hasDir(rel, "examples")
		}},
	// typescript-language-server over tsserver: a project is what a
	// tsconfig.json includes, so bench/graphacc.sh copies the tree and
	// writes one that includes every .ts file.
	"typescript": {id: "typescript", server: "typescript-language-server", args: []string{"--stdio"}, spec: "typescript-language-server", n: 30,
		defaultDir: func() string { return "" },
		target: func(rel string) bool {
			base := path.Base(rel)
			return !strings.HasSuffix(base, ".d.ts") && !strings.Contains(base, ".test.") && !strings.Contains(base, ".spec.") &&
				!hasDir(rel, "test") && !hasDir(rel, "tests") && !hasDir(rel, "__tests__") && !hasDir(rel, "benchmarks")
		}},
}

func hasDir(rel, name string) bool {
	parts := strings.Split(path.Dir(rel), "/")
	for _, p := range parts {
		if p == name {
			return true
		}
	}
	return false
}

// scope tells which files the language server sees, so sites it cannot
// see are kept out of precision. For Go: the modules the server was given
// as workspace folders, minus what the go command ignores (testdata, _x
// and .x folders, vendor) and files the build constraints of this
// GOOS/GOARCH exclude.
type scope struct {
	lang    string
	root    string
	modules []string // rel dirs of workspace modules, longest first
	ctx     build.Context
	cgo     map[string]bool // rel -> imports "C"
}

func newScope(l *lang, root string, env []string) *scope {
	s := &scope{lang: l.id, root: root, cgo: map[string]bool{}}
	if l.id != "go" {
		s.modules = []string{"."}
		return s
	}
	s.ctx = build.Default
	cmd := exec.Command("go", "env", "CGO_ENABLED", "GOOS", "GOARCH")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) == 3 {
			s.ctx.CgoEnabled = f[0] == "1"
			s.ctx.GOOS, s.ctx.GOARCH = f[1], f[2]
		}
	}
	_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && p != root {
			n := e.Name()
			if strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" {
				return filepath.SkipDir
			}
		}
		if !e.IsDir() && e.Name() == "go.mod" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			s.modules = append(s.modules, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(s.modules) == 0 {
		s.modules = []string{"."}
	}
	sort.Slice(s.modules, func(i, j int) bool { return len(s.modules[i]) > len(s.modules[j]) })
	return s
}

// folders are the workspace folders to give the server.
func (s *scope) folders() []string {
	var out []string
	for i := len(s.modules) - 1; i >= 0; i-- {
		out = append(out, filepath.Join(s.root, filepath.FromSlash(s.modules[i])))
	}
	return out
}

func (s *scope) module(rel string) string {
	for _, m := range s.modules {
		if m == "." || rel == m || strings.HasPrefix(rel, m+"/") {
			return m
		}
	}
	return ""
}

// visible says whether the server can see rel when asked about a symbol
// of module mod, and if not, why.
func (s *scope) visible(rel, mod string) (bool, string) {
	if s.lang != "go" {
		return true, ""
	}
	for _, p := range strings.Split(path.Dir(rel), "/") {
		if strings.HasPrefix(p, "_") || strings.HasPrefix(p, ".") && p != "." || p == "testdata" || p == "vendor" {
			return false, "in a folder the go command ignores (" + p + ")"
		}
	}
	if m := s.module(rel); m != mod {
		return false, "in another module (" + m + "): the server searches the target's module only"
	}
	dir := filepath.Join(s.root, filepath.FromSlash(path.Dir(rel)))
	ok, err := s.ctx.MatchFile(dir, path.Base(rel))
	if err != nil || !ok {
		return false, "excluded by build constraints for " + s.ctx.GOOS + "/" + s.ctx.GOARCH
	}
	if !s.ctx.CgoEnabled && s.importsC(rel) {
		return false, "a cgo file (import \"C\") and cgo is off"
	}
	return true, ""
}

// importsC says whether a Go file imports "C" (MatchFile does not look).
func (s *scope) importsC(rel string) bool {
	if v, ok := s.cgo[rel]; ok {
		return v
	}
	v := false
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(s.root, filepath.FromSlash(rel)), nil, parser.ImportsOnly)
	if err == nil {
		for _, im := range f.Imports {
			if im.Path.Value == `"C"` {
				v = true
			}
		}
	}
	s.cgo[rel] = v
	return v
}

type target struct {
	def
	Iface   bool // a method of an interface type
	Col     int  // 0-based byte column of the name on its line
	Col16   int  // the same in UTF-16 units
	LineTxt string
	Module  string
}

func (t *target) kindLabel() string {
	switch {
	case t.Iface:
		return "iface method"
	case t.Kind == "method", t.Kind == "getter":
		return "method"
	}
	return "func"
}

// pick chooses n functions and methods by seed, at most perDir in a
// folder, from files that may hold targets and that the server sees.
func pick(d *dump, l *lang, sc *scope, src *sources, n, perDir int, seed uint64, only []string) (chosen []*target, skipped map[string]int) {
	skipped = map[string]int{}
	want := map[string]bool{}
	for _, o := range only {
		want[o] = true
	}
	var pool []def
	for _, df := range d.defs {
		if df.Kind != "function" && df.Kind != "method" && df.Kind != "getter" || d.files[df.Rel] != l.id {
			continue
		}
		if len(only) > 0 {
			if want[key(df.Rel, df.Line)] {
				pool = append(pool, df)
			}
			continue
		}
		if df.Name == "_" {
			skipped["named _ (no references possible)"]++
			continue
		}
		if !l.target(df.Rel) {
			skipped["test file or test data"]++
			continue
		}
		if ok, _ := sc.visible(df.Rel, sc.module(df.Rel)); !ok {
			skipped["not seen by the server (build constraints, ignored folder)"]++
			continue
		}
		pool = append(pool, df)
	}
	sort.SliceStable(pool, func(i, j int) bool {
		if pool[i].Rel != pool[j].Rel {
			return pool[i].Rel < pool[j].Rel
		}
		return pool[i].Line < pool[j].Line
	})
	if len(only) == 0 {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	} else {
		n, perDir = len(pool), len(pool)
	}
	perDirCount := map[string]int{}
	for _, df := range pool {
		if len(chosen) == n {
			break
		}
		dir := path.Dir(df.Rel)
		if perDirCount[dir] >= perDir {
			continue
		}
		txt := src.line(df.Rel, df.Line)
		col := nameColumn(l.id, txt, df.Name)
		if col < 0 {
			skipped["name not found on its line"]++
			continue
		}
		perDirCount[dir]++
		t := &target{def: df, Col: col, Col16: utf16Len(txt[:col]), LineTxt: txt, Module: sc.module(df.Rel)}
		if df.Kind == "method" && d.kinds[dir+"\x00"+df.Container] == "interface" {
			t.Iface = true
		}
		chosen = append(chosen, t)
	}
	return chosen, skipped
}

// nameColumn finds a definition's name on its line: after func and a
// receiver (Go), after def (Python), else its first whole-word use.
func nameColumn(lang, line, name string) int {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	kw := ""
	switch lang {
	case "go":
		kw = "func"
	case "typescript", "javascript":
		for _, w := range []string{"export ", "default ", "async "} {
			if strings.HasPrefix(line[i:], w) {
				i += len(w)
			}
		}
		kw = "function"
	case "python":
		if strings.HasPrefix(line[i:], "async ") {
			i += len("async ")
			for i < len(line) && line[i] == ' ' {
				i++
			}
		}
		kw = "def"
	}
	if kw != "" && strings.HasPrefix(line[i:], kw) && len(line) > i+len(kw) && !isIdent(line[i+len(kw)]) {
		j := i + len(kw)
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		if lang == "go" && j < len(line) && line[j] == '(' {
			j = pastGroup(line, j, '(', ')')
			for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
				j++
			}
		}
		if wordAt(line, j, name) {
			return j
		}
	}
	for j := 0; j+len(name) <= len(line); j++ {
		if wordAt(line, j, name) {
			return j
		}
	}
	return -1
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func wordAt(line string, j int, name string) bool {
	if !strings.HasPrefix(line[j:], name) {
		return false
	}
	if j > 0 && isIdent(line[j-1]) {
		return false
	}
	e := j + len(name)
	return e >= len(line) || !isIdent(line[e])
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// sources reads files' lines, once each.
type sources struct {
	root  string
	files map[string][]string
}

func (s *sources) lines(rel string) []string {
	if ls, ok := s.files[rel]; ok {
		return ls
	}
	var ls []string
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	if filepath.IsAbs(rel) { // a file outside the root (a typeshed stub)
		p = rel
	}
	if f, err := os.Open(p); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			ls = append(ls, sc.Text())
		}
		f.Close()
	}
	s.files[rel] = ls
	return ls
}

func (s *sources) line(rel string, n int) string {
	ls := s.lines(rel)
	if n < 1 || n > len(ls) {
		return ""
	}
	return ls[n-1]
}

// shape says whether the identifier at byte column col of line is called
// (followed by an argument list, perhaps after type arguments) or used as
// a value, by the text alone.
func shape(line string, col int, name string) string {
	if col < 0 || !strings.HasPrefix(line[col:], name) {
		return "?"
	}
	j := col + len(name)
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	if j < len(line) && line[j] == '[' {
		j = pastGroup(line, j, '[', ']')
	}
	if j < len(line) && line[j] == '(' {
		return "call"
	}
	return "value"
}

// pastGroup is the column just past the group that opens at column j of
// line (a method's receiver, type arguments), len(line) when it does not
// close there.
func pastGroup(line string, j int, open, close byte) int {
	depth := 0
	for ; j < len(line); j++ {
		if line[j] == open {
			depth++
		} else if line[j] == close {
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return j
}
