package astgrep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// Big files parse within the process's budget of source bytes in flight,
// searches and captures alike, and every file is still searched: the
// held-back big ones too, with many workers, all of them big.
func TestBigParsesShareABudget(t *testing.T) {
	files := map[string]string{}
	var body strings.Builder
	for i := range 9000 {
		fmt.Fprintf(&body, "\tv%d := g(%d)\n", i, i)
	}
	big := "package p\n\nfunc F() {\n" + body.String() + "}\n" // about 150 KiB
	for i := range 8 {
		files[fmt.Sprintf("big%d.go", i)] = big
	}
	root := testenv.Tree(t, files)
	for i := range 30 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("small%02d.go", i)), []byte("package p\n\nfunc f() { x := 1 }\n"), 0o644)
	}
	e := NewEngine(Options{Workers: 6, CacheBytes: -1})
	defer e.Close()

	procpool.BigParses.ResetPeak()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "$X := $Y"})
			if err != nil || r.Total != 8*9000+30 || r.FilesParsed != 38 {
				t.Errorf("search: %v %+v", err, r)
			}
		}()
	}
	wg.Wait()
	q, err := e.CompileCaptureQuery("go", `(short_var_declaration) @s`)
	if err != nil {
		t.Fatal(err)
	}
	var cf []CaptureFile
	entries, _ := os.ReadDir(root)
	for _, en := range entries {
		info, _ := en.Info()
		cf = append(cf, CaptureFile{Path: filepath.Join(root, en.Name()), Query: q, Info: info})
	}
	var mu sync.Mutex
	n := 0
	if err := e.Capture(context.Background(), at(root).Guard(), cf, func(r *CaptureResult) {
		mu.Lock()
		n += len(r.Matches)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if n != 8*9000+30 {
		t.Errorf("capture: %d matches", n)
	}
	if used, peak, limit := procpool.BigParses.Use(); used != 0 || peak > limit || peak < int64(len(big)) {
		t.Errorf("parse budget: %d in use after, peak %d (limit %d, a big file %d)", used, peak, limit, len(big))
	}
}

// A search cancelled while its big files wait for the budget ends, and
// gives the budget back.
func TestHeldBackBigFilesEndWithTheSearch(t *testing.T) {
	files := map[string]string{}
	big := "package p\n\nfunc F() {\n" + strings.Repeat("\tx := g(1)\n", 15000) + "}\n"
	for i := range 6 {
		files[fmt.Sprintf("big%d.go", i)] = big
	}
	root := testenv.Tree(t, files)
	e := NewEngine(Options{Workers: 4, CacheBytes: -1})
	defer e.Close()
	// Another parse holds the whole budget.
	_, _, limit := procpool.BigParses.Use()
	if !procpool.BigParses.Acquire(context.Background(), limit) {
		t.Fatal("no budget")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Search(ctx, Query{Path: at(root), Pattern: "$X := $Y"})
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled search returned no error")
	}
	procpool.BigParses.Release(limit)
	if used, _, _ := procpool.BigParses.Use(); used != 0 {
		t.Errorf("%d bytes of the budget still held", used)
	}
}
