package graphtool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// confirmFixture is a module whose Store.Save has name-only candidate
// sites: one on a *store.Store, one on a *cache.Cache, one through an
// interface.
func confirmFixture(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/shop\n\ngo 1.22\n",
		"store/store.go": "package store\n\ntype Store struct{}\n\nfunc (s *Store) Save(n int) error { return nil }\n",
		"cache/cache.go": "package cache\n\ntype Cache struct{}\n\nfunc (c *Cache) Save(n int) error { return nil }\n",
		"api/api.go": `package api

import (
	"example.com/shop/cache"
	"example.com/shop/store"
)

type Saver interface{ Save(n int) error }

var stores = table[*store.Store]()
var caches = table[*cache.Cache]()
var savers = table[Saver]()

func Handle() {
	stores["a"].Save(1)
	caches["b"].Save(2)
	savers["c"].Save(3)
}

// table's result is a type the declarations leave to the caller's T.
func table[T any]() map[string]T { return nil }
`,
	}
	testenv.WriteTree(t, root, files)
	return root
}

type confirmed struct {
	Confirm graphtool.Confirmation `json:"confirm"`
}

func callConfirm(t *testing.T, cfg graphtool.Config) (string, graphtool.Confirmation) {
	t.Helper()
	testenv.LookPath(t, "gopls")
	return confirmCallers(t, builtintools.Options{Root: confirmFixture(t), Settings: map[string]any{"code_graph": cfg}}, "store.Store.Save")
}

// confirmCallers asks a run with opts for symbol's callers with confirm,
// and gives the answer's text and its confirmation.
func confirmCallers(t *testing.T, opts builtintools.Options, symbol string) (string, graphtool.Confirmation) {
	t.Helper()
	r, err := builtintools.NewRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	args, _ := json.Marshal(map[string]any{"operation": "callers", "symbol": symbol, "confirm": true})
	res, err := r.Call(context.Background(), tiers.Normal, "code_graph", args)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out confirmed
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		b, _ := json.Marshal(c)
		text += string(b)
	}
	return text, out.Confirm
}

func marks(cf graphtool.Confirmation) map[int]graphtool.ConfirmMark {
	m := map[int]graphtool.ConfirmMark{}
	for _, s := range cf.Sites {
		m[s.Line] = s
	}
	return m
}

// A call through an interface may run the target: gopls's definition, the
// interface's method, neither confirms nor rejects it.
func TestConfirmInterfaceIsUnchecked(t *testing.T) {
	text, cf := callConfirm(t, graphtool.Config{})
	m := marks(cf)
	if cf.Server != "gopls" || cf.Candidates != 3 || cf.Asked != 3 || cf.Confirmed != 1 || cf.Rejected != 1 || cf.Unchecked != 1 || cf.Bound != "" {
		t.Fatalf("counts: %+v\n%s", cf, text)
	}
	if m[15].Mark != graphtool.Confirmed || m[16].Mark != graphtool.Rejected || m[16].DefinedAs != "cache.Cache.Save" {
		t.Errorf("store and cache sites: %+v %+v", m[15], m[16])
	}
	if s := m[17]; s.Mark != graphtool.Unchecked || s.DefinedAs != "api.Saver.Save" || !strings.Contains(s.Why, "interface method") {
		t.Errorf("the interface site: %+v", s)
	}
}

// Past the site bound the rest are unchecked, and the answer says which
// bound; past the time bound likewise.
func TestConfirmBounds(t *testing.T) {
	text, cf := callConfirm(t, graphtool.Config{ConfirmSites: 1})
	if cf.Asked != 1 || cf.Unchecked != 2 || cf.Bound != "sites" || cf.MaxSites != 1 {
		t.Fatalf("site bound: %+v\n%s", cf, text)
	}
	if !strings.Contains(text, "the sites bound was reached") || !strings.Contains(text, "past the bound of 1 sites") {
		t.Errorf("the text does not say the site bound cut it: %s", text)
	}
	text, cf = callConfirm(t, graphtool.Config{ConfirmTime: time.Nanosecond})
	if cf.Asked != 0 || cf.Unchecked != 3 || cf.Bound != "time" || cf.Confirmed+cf.Rejected != 0 {
		t.Fatalf("time bound: %+v\n%s", cf, text)
	}
	if !strings.Contains(text, "the time bound was reached") {
		t.Errorf("the text does not say the time bound cut it: %s", text)
	}
}

// Sites are asked per server root (issue 26 §2): a folder whose server
// cannot run (here its go.mod is a link out of the root, which is no root
// marker) leaves its own sites unchecked, saying why, and the sites of
// the module whose server runs are still asked, though the broken folder's
// site comes first.
func TestConfirmPerServerRoot(t *testing.T) {
	testenv.LookPath(t, "gopls")
	root := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/shapes\n\ngo 1.22\n",
		"shapes.go":  "package shapes\n\ntype Rect struct{ W, H float64 }\n\nfunc (r Rect) Area() float64 { return r.W * r.H }\n\nfunc First[T any](xs []T) T { return xs[0] }\n",
		"use.go":     "package shapes\n\nfunc Use(rs []Rect) float64 { return First(rs).Area() }\n",
		"aaa/aaa.go": "package aaa\n\nimport \"example.com/shapes\"\n\nfunc Use(rs []shapes.Rect) float64 { return shapes.First(rs).Area() }\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "go.mod")
	if err := os.WriteFile(out, []byte("module example.com/aaa\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(root, "aaa", "go.mod")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	_, cf := confirmCallers(t, builtintools.Options{Root: root}, "Rect.Area")
	byFile := map[string]graphtool.ConfirmMark{}
	for _, s := range cf.Sites {
		byFile[s.File] = s
	}
	if len(cf.Sites) < 2 || cf.Sites[0].File != "aaa/aaa.go" {
		t.Fatalf("the broken module's site is not asked first: %+v", cf.Sites)
	}
	if cf.NoServer != "" || cf.Server != "gopls" || byFile["use.go"].Mark != graphtool.Confirmed {
		t.Errorf("the root module's site was not asked: %+v", cf)
	}
	if s := byFile["aaa/aaa.go"]; s.Mark != graphtool.Unchecked || !strings.Contains(s.Why, "root marker") {
		t.Errorf("the broken module's site: %+v", s)
	}
}
