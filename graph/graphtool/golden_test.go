package graphtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rogpeppe/go-internal/txtar"
)

// goldenScrub replaces what changes from run to run.
var goldenScrub = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`built in [0-9.]+[µm]?s`), "built in TIME"},
	{regexp.MustCompile(`"build_time":"[^"]*"`), `"build_time":"TIME"`},
	// An estimate that moves with every field the index gains.
	{regexp.MustCompile(`"memory_mib":[0-9.e-]+`), `"memory_mib":MIB`},
	{regexp.MustCompile(`about [0-9.]+ MiB`), "about MIB"},
}

// TestGolden replays each testdata/golden archive's queries through the
// code_graph tool and compares the text and the structured result, byte
// for byte, with the archive's "want" (rewritten with -update). The
// archive's files under root/ are the checkout; "queries" holds one JSON
// call a line, with "budget N" (the run's output budget from there on) and
// "maxfilesize N" (the index's, for the whole archive) lines between.
func TestGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/golden/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no golden archives")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			var queries, want []byte
			checkout := map[string][]byte{}
			for _, f := range ar.Files {
				switch {
				case f.Name == "queries":
					queries = f.Data
				case f.Name == "want":
					want = f.Data
				case strings.HasPrefix(f.Name, "root/"):
					checkout[strings.TrimPrefix(f.Name, "root/")] = f.Data
				}
			}
			testenv.WriteTree(t, root, checkout)
			got := replayGolden(t, root, string(queries))
			if *builtin.Update {
				out := &txtar.Archive{Comment: ar.Comment}
				for _, f := range ar.Files {
					if f.Name != "want" {
						out.Files = append(out.Files, f)
					}
				}
				out.Files = append(out.Files, txtar.File{Name: "want", Data: []byte(got)})
				if err := os.WriteFile(p, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -run TestGolden -update rewrites it):\n%s", p, testenv.LineDiff(string(want), got))
			}
		})
	}
}

func replayGolden(t *testing.T, root, queries string) string {
	t.Helper()
	var maxFile int64
	for _, l := range strings.Split(queries, "\n") {
		if v, ok := strings.CutPrefix(l, "maxfilesize "); ok {
			maxFile, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	runs := map[int]*registry.Run{}
	defer func() {
		for _, r := range runs {
			r.Close()
		}
	}()
	budget := 0
	var out strings.Builder
	for _, l := range strings.Split(queries, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "budget "); ok {
			budget, _ = strconv.Atoi(v)
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "maxfilesize ") {
			continue
		}
		r := runs[budget]
		if r == nil {
			var err error
			r, err = builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp"}, OutputBudget: budget,
				Settings: map[string]any{"code_graph": graphtool.Config{Options: graph.Options{MaxFileSize: maxFile}, Wait: time.Minute}}})
			if err != nil {
				t.Fatal(err)
			}
			runs[budget] = r
		}
		g, ok := graphtool.Key.Of(r)
		if !ok {
			t.Fatal("no code_graph resource in the run")
		}
		views := g.H.Views()
		res, err := r.Call(context.Background(), tiers.Normal, "code_graph", json.RawMessage(l))
		if err != nil {
			t.Fatal(err)
		}
		// One view per answer (one snapshot, one resolver): a second would
		// mix snapshots in one answer.
		if n := g.H.Views() - views; n > 1 {
			t.Errorf("%s took %d views of the index; an answer takes one", l, n)
		}
		if budget > 0 {
			fmt.Fprintf(&out, "> [budget %d] %s\n", budget, l)
		} else {
			fmt.Fprintf(&out, "> %s\n", l)
		}
		out.WriteString(resultText(root, res))
	}
	return out.String()
}

// resultText is a result's text blocks, then its structured content as
// the client receives it.
func resultText(root string, res *mcp.CallToolResult) string {
	var b strings.Builder
	if res.IsError {
		b.WriteString("error: ")
	}
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteByte('\n')
		}
	}
	if res.StructuredContent != nil {
		j, err := json.Marshal(res.StructuredContent)
		if err != nil {
			j = []byte(err.Error())
		}
		fmt.Fprintf(&b, "structured: %s\n", j)
	}
	s := strings.ReplaceAll(b.String(), root, "$ROOT")
	for _, sc := range goldenScrub {
		s = sc.re.ReplaceAllString(s, sc.with)
	}
	return s
}

// The tool's output schema is part of what clients see.
func TestGoldenSchema(t *testing.T) {
	var v any
	if err := json.Unmarshal(graphtool.Tool.OutputSchema(), &v); err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(v, "", " ")
	got = append(got, '\n')
	testenv.Golden(t, "testdata/golden/schema.json", string(got), *builtin.Update)
}

// partialScrub replaces the counts of a build in progress.
var partialScrub = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d+ of \d+ files indexed so far`), "N of M files indexed so far"},
	{regexp.MustCompile(`"files":\d+,"found":\d+`), `"files":N,"found":M`},
}

// TestGoldenPartial is TestGolden for answers given while the index is
// still building: ahead of the index (callers, callees) and from the part
// indexed so far (outline, find, impact, status), with the build's
// progress scrubbed. A build that wins the race skips the test.
func TestGoldenPartial(t *testing.T) {
	root := coldTree(t, 4000, callersOf("package p000\n\n// Alpha is the target.\nfunc Alpha() { beta() }\n\nfunc beta() {}\n", "Alpha", 400))
	r := coldRun(t, root)
	var err error
	g, _ := graphtool.Key.Of(r)
	queries := []string{
		`{"operation": "callers", "symbol": "Alpha"}`,
		`{"operation": "callees", "symbol": "p000.Alpha"}`,
		`{"operation": "outline", "file": "p000/f0.go"}`,
		`{"operation": "find", "symbol": "Alpha"}`,
		`{"operation": "impact", "symbol": "beta", "depth": 1}`,
		`{"operation": "callers", "symbol": "beta", "confirm": true}`,
		`{"operation": "status"}`,
	}
	var out strings.Builder
	for _, q := range queries {
		var res *mcp.CallToolResult
		for try := 0; ; try++ {
			res, err = r.Call(context.Background(), tiers.Normal, "code_graph", json.RawMessage(q))
			if err != nil {
				t.Fatal(err)
			}
			if g.H.Index().Ready() {
				t.Skipf("the build finished before %s was answered from part of it", q)
			}
			if !res.IsError {
				break
			}
			if try == 200 {
				t.Fatalf("%s: %s", q, resultText(root, res))
			}
			time.Sleep(time.Millisecond)
		}
		s := resultText(root, res)
		for _, sc := range partialScrub {
			s = sc.re.ReplaceAllString(s, sc.with)
		}
		if strings.Contains(q, "status") {
			s = regexp.MustCompile(`\d+(\.\d+)?`).ReplaceAllString(s, "N")
		}
		fmt.Fprintf(&out, "> %s\n%s", q, s)
	}
	testenv.Golden(t, "testdata/golden/partial.txt", out.String(), *builtin.Update)
}
