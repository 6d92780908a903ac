package astgrep

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// goFile is a large, ordinary Go file from the local toolchain.
func goFile(b *testing.B) []byte {
	b.Helper()
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return src
}

// BenchmarkParse measures parsing plus flattening one file.
func BenchmarkParse(b *testing.B) {
	src := goFile(b)
	e := NewEngine(Options{})
	defer e.Close()
	l := e.langs.lookup("go")
	l.load()
	p := e.getParser()
	defer e.putParser(p)
	var buf []node
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		nodes, err := p.parse(context.Background(), l.g, src, buf, nil)
		if err != nil {
			b.Fatal(err)
		}
		buf = nodes[:0]
	}
}

// BenchmarkMatch measures matching an unselective pattern over a parsed
// file (no parsing).
func BenchmarkMatch(b *testing.B) {
	src := goFile(b)
	e := NewEngine(Options{})
	defer e.Close()
	l := e.langs.lookup("go")
	l.load()
	pat, err := e.compile(context.Background(), l, "$X := $Y")
	if err != nil {
		b.Fatal(err)
	}
	p := e.getParser()
	t, err := e.parseWith(context.Background(), p, l, src)
	e.putParser(p)
	if err != nil {
		b.Fatal(err)
	}
	m := &matcher{t: t, p: pat}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if len(m.findAll()) == 0 {
			b.Fatal("no matches")
		}
	}
}

// BenchmarkSearchNetHTTP searches GOROOT/src/net/http, cold (new engine)
// and warm (same engine).
func BenchmarkSearchNetHTTP(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src", "net", "http")
	if _, err := os.Stat(root); err != nil {
		b.Skip(err)
	}
	for _, pat := range []string{"defer $X.Close()", "$X := $Y"} {
		b.Run("cold/"+pat, func(b *testing.B) {
			for b.Loop() {
				e := NewEngine(Options{})
				if _, err := e.Search(context.Background(), Query{Root: root, Pattern: pat, Language: "go"}); err != nil {
					b.Fatal(err)
				}
				e.Close()
			}
		})
		b.Run("warm/"+pat, func(b *testing.B) {
			e := NewEngine(Options{})
			defer e.Close()
			q := Query{Root: root, Pattern: pat, Language: "go"}
			if _, err := e.Search(context.Background(), q); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := e.Search(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
