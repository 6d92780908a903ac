package lsp

import (
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// TestPreviewGopls previews proposed contents on a real gopls: one that
// would break the build, one that would fix it, one cancelled while its
// unsaved versions are in the server, and a file no server owns. After
// each, the server must see the files as on disk.
func TestPreviewGopls(t *testing.T) {
	s := newSession(t, "go", "gopls", Config{})
	shapes := s.read("shapes/shapes.go")
	broken := strings.Replace(shapes, "func Total(shapes []Shape) float64 {", "func Total(shapes []Shape) int {", 1)

	asOnDisk := func(t *testing.T) {
		t.Helper()
		if n := s.sup.fleet.unsavedDocs(); n != 0 {
			t.Errorf("%d unsaved versions left behind", n)
		}
		d := must(s.sup.Diagnostics(s.ctx, s.at("shapes/shapes.go")))(t)
		for _, x := range d.Diagnostics {
			if x.Severity == diag.SeverityError {
				t.Errorf("lsp diagnostics sees the preview's text: %s", x.Message)
			}
		}
		h := must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if !strings.Contains(h.Contents, "[]shapes.Shape) float64") {
			t.Errorf("hover sees the preview's text: %s", h.Contents)
		}
	}

	t.Run("a change that breaks the build", func(t *testing.T) {
		p := must(s.sup.Preview(s.ctx, []Proposed{{File: s.at("shapes/shapes.go"), Text: []byte(broken)}}))(t)
		if len(p.Files) != 1 || p.Incomplete {
			t.Fatalf("preview: %+v", p)
		}
		v := p.Files[0]
		if v.File != "shapes/shapes.go" || v.Server != "gopls" || v.State != diag.Checked || v.Version < 2 || len(v.Fixed) != 0 {
			t.Errorf("verdict: %+v", v)
		}
		if len(v.New) != 1 || v.New[0].Severity != "error" || v.New[0].LineText != "\treturn sum" || !strings.Contains(v.New[0].Message, "float64") {
			t.Errorf("want one new error on \"return sum\", got %+v", v.New)
		}
		if s.read("shapes/shapes.go") != shapes {
			t.Error("the preview wrote the file")
		}
		asOnDisk(t)
	})

	t.Run("a change that fixes the build", func(t *testing.T) {
		s.write("shapes/shapes.go", broken)
		if d := must(s.sup.Diagnostics(s.ctx, s.at("shapes/shapes.go")))(t); len(d.Diagnostics) == 0 {
			t.Fatal("the broken file has no diagnostics")
		}
		p := must(s.sup.Preview(s.ctx, []Proposed{{File: s.at("shapes/shapes.go"), Text: []byte(shapes)}}))(t)
		v := p.Files[0]
		if v.State != diag.Checked || len(v.New) != 0 || len(v.Fixed) != 1 || v.Fixed[0].LineText != "\treturn sum" {
			t.Errorf("want one fixed error and nothing new, got %+v", v)
		}
		if !p.Matches("shapes/shapes.go", nil) {
			t.Error("a clean proposal does not match a clean file")
		}
		s.write("shapes/shapes.go", shapes)
		asOnDisk(t)
	})

	t.Run("cancelled with its versions in the server", func(t *testing.T) {
		ctx, cancel := context.WithCancel(s.ctx)
		s.sup.tools.hooks = &testHooks{previewSent: func(*server) {
			if n := s.sup.fleet.unsavedDocs(); n != 1 {
				t.Errorf("the preview's version is not in the server: %d unsaved", n)
			}
			cancel()
		}}
		_, err := s.sup.Preview(ctx, []Proposed{{File: s.at("shapes/shapes.go"), Text: []byte(broken)}})
		s.sup.tools.hooks = nil
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want the cancellation, got %v", err)
		}
		asOnDisk(t)
	})

	t.Run("a file no server owns", func(t *testing.T) {
		s.write("notes.txt", "hello\n")
		p := must(s.sup.Preview(s.ctx, []Proposed{{File: s.at("notes.txt"), Text: []byte("bye\n")},
			{File: s.at("shapes/shapes.go"), Text: []byte(shapes)}}))(t)
		if v := p.Files[0]; v.State != diag.NoServer || v.Server != "" || !strings.Contains(v.Why, ".txt files") {
			t.Errorf("no server: %+v", v)
		}
		if v := p.Files[1]; v.State != diag.Checked || len(v.New)+len(v.Fixed) != 0 {
			t.Errorf("an unchanged file: %+v", v)
		}
		asOnDisk(t)
	})
}

var previewRounds = flag.Int("preview.rounds", 40, "previews TestPreviewCancelledAtRandom runs")

// TestPreviewCancelledAtRandom runs previews from two callers at once on
// one gopls, most of them cancelled at a random moment, and counts the
// unsaved versions left behind after each: none, and the server's answers
// are about the file as on disk at the end.
func TestPreviewCancelledAtRandom(t *testing.T) {
	s := newSession(t, "go", "gopls", Config{})
	shapes := s.read("shapes/shapes.go")
	broken := strings.Replace(shapes, "func Total(shapes []Shape) float64 {", "func Total(shapes []Shape) int {", 1)
	// Warm the server: the first preview loads the workspace.
	must(s.sup.Preview(s.ctx, []Proposed{{File: s.at("shapes/shapes.go"), Text: []byte(broken)}}))(t)
	// The session's context ends after 3 minutes; a thousand rounds take
	// longer.
	base, stop := context.WithTimeout(context.Background(), 3*time.Minute+time.Duration(*previewRounds)*time.Second)
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	completed, cancelled := 0, 0
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 31))
			for range *previewRounds / 2 {
				ctx, cancel := context.WithCancel(base)
				timer := time.AfterFunc(time.Duration(rng.IntN(800))*time.Millisecond, cancel)
				files := []Proposed{{File: s.at("shapes/shapes.go"), Text: []byte(broken)}}
				if rng.IntN(2) == 0 {
					files = append(files, Proposed{File: s.at("main.go"), Text: []byte(strings.Replace(s.read("main.go"), "sq,", "sq, 1,", 1))})
				}
				p, err := s.sup.Preview(ctx, files)
				timer.Stop()
				cancel()
				mu.Lock()
				switch {
				case errors.Is(err, context.Canceled):
					cancelled++
				case err != nil:
					t.Errorf("preview: %v", err)
				case p.Files[0].State != diag.Checked || len(p.Files[0].New) != 1:
					t.Errorf("a preview that finished: %+v", p.Files[0])
				default:
					completed++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d previews completed, %d cancelled", completed, cancelled)
	if n := s.sup.fleet.unsavedDocs(); n != 0 {
		t.Errorf("%d unsaved versions left behind", n)
	}
	d := must(s.sup.Diagnostics(base, s.at("shapes/shapes.go")))(t)
	if len(d.Diagnostics) != 0 {
		t.Errorf("lsp diagnostics sees a preview's text: %+v", d.Diagnostics)
	}
	h := must(s.sup.Hover(base, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	if !strings.Contains(h.Contents, "[]shapes.Shape) float64") {
		t.Errorf("hover sees a preview's text: %s", h.Contents)
	}
}

// The change a preview checked, then written (ast_edit then resolve):
// clangd, given back a version's text it built for the preview while the
// restore between them was still queued, takes the inputs for unchanged
// and publishes nothing for the written version. The write's check used
// to time out after the whole wait; what clangd said of that very text is
// its answer.
func TestWriteAfterPreviewOfSameText(t *testing.T) {
	for _, tc := range []struct{ fixture, program, file, add, want string }{
		{"c", "clangd", "main.c", "\nint broken(void) { return undefinedX; }\n", "undefinedX"},
		{"go", "gopls", "main.go", "\nfunc broken() { undefinedX() }\n", "undefinedX"},
	} {
		t.Run(tc.program, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, tc.fixture, tc.program, Config{})
			at := loc(s.t, s.sup, s.path(tc.file))
			if _, err := s.sup.AfterWrite(s.ctx, at); err != nil {
				t.Fatal(err)
			}
			broken := s.read(tc.file) + tc.add
			// One round: gopls v0.23, once the disk already holds the same
			// error (a second round), may publish no diagnostics at all for
			// the written version when an unsaved and a restored version of
			// it came just before; that is the server's answer, not a wait.
			for round := range 1 {
				p, err := s.sup.Preview(s.ctx, []Proposed{{File: at, Text: []byte(broken)}})
				if err != nil || p.Files[0].State != diag.Checked {
					t.Fatalf("round %d: preview: %v %+v", round, err, p)
				}
				s.write(tc.file, broken)
				ds, err := s.sup.AfterWrite(s.ctx, at)
				if err != nil {
					t.Fatalf("round %d: the write of the previewed text: %v", round, err)
				}
				if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return strings.Contains(d.Message, tc.want) }) {
					t.Fatalf("round %d: the written version's diagnostics lack %q: %+v", round, tc.want, ds)
				}
				broken += "\n"
			}
		})
	}
}
