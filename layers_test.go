package builtintools_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const module = "github.com/builtin-tools/builtin-tools"

// The layer table of docs/ARCHITECTURE.md, enforced (as go/build's
// deps_test.go does for the standard library): every package of the module
// is in one row, imports only its own row and the rows above, and its
// tests may add the entry points and the harnesses.
func TestLayers(t *testing.T) {
	rows, names := layerTable(t)
	rowOf := func(pkg string) (int, bool) {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if rel == "" {
			rel = "builtintools"
		}
		for i, r := range rows {
			for _, p := range r {
				if p == rel || strings.HasSuffix(p, "/...") && strings.HasPrefix(rel, strings.TrimSuffix(p, "...")) {
					return i, true
				}
			}
		}
		return 0, false
	}
	entry, harness := slices.Index(names, "entry points"), slices.Index(names, "harnesses")
	if entry < 0 || harness < 0 {
		t.Fatalf("the table has no entry points or harnesses row: %q", names)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = testenv.ModuleRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		row, ok := rowOf(p.ImportPath)
		if !ok {
			t.Errorf("%s is in no row of the layer table (docs/ARCHITECTURE.md)", p.ImportPath)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if imp != module && !strings.HasPrefix(imp, module+"/") || imp == p.ImportPath {
					continue
				}
				r, ok := rowOf(imp)
				switch {
				case !ok:
					t.Errorf("%s imports %s, which is in no row", p.ImportPath, imp)
				case r == harness && !test && row != harness:
					t.Errorf("%s imports the harness %s outside its tests", p.ImportPath, imp)
				case r == row && strings.HasPrefix(names[row], "graph "):
					t.Errorf("%s imports %s, in its own row (%s): the graph's parts in one row do not import each other", p.ImportPath, imp, names[row])
				case r == harness, r <= row:
				case test && r == entry:
				default:
					t.Errorf("%s (%s) imports %s (%s), a row below it", p.ImportPath, names[row], imp, names[r])
				}
			}
		}
		check(p.Imports, false)
		check(append(p.TestImports, p.XTestImports...), true)
	}
}

// layerTable reads the rows of the table under "## Layers": each row's
// name and the packages named in backticks in its second column.
func layerTable(t *testing.T) ([][]string, []string) {
	f, err := os.Open(testenv.ModuleRoot() + "/docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tick := regexp.MustCompile("`([^`]+)`")
	var rows [][]string
	var names []string
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Layers"
		case in && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| layer"):
			cols := strings.Split(line, "|")
			if len(cols) < 4 {
				continue
			}
			var pkgs []string
			for _, m := range tick.FindAllStringSubmatch(cols[2], -1) {
				pkgs = append(pkgs, m[1])
			}
			rows = append(rows, pkgs)
			names = append(names, strings.TrimSpace(cols[1]))
		}
	}
	if len(rows) == 0 {
		t.Fatal("no layer table under ## Layers in docs/ARCHITECTURE.md")
	}
	return rows, names
}
