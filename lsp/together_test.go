package lsp

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A call that writes two files, one using a name the other now defines
// (a rename's caller and callee), is checked with the server holding both
// new texts: SyncWritten gives it every file first, and CheckWritten with
// together awaits the publishes to settle, so the caller is not reported
// broken by the name as gopls saw it beside the callee's old text. The
// first step shows that state: the caller checked alone, its callee's new
// text not yet sent, is broken.
func TestFilesWrittenTogether(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "gopls", map[string]string{
		"go.mod":         "module example.com/tw\n\ngo 1.22\n",
		"stats/stats.go": "package stats\n\nfunc Sum(xs []int) int { return len(xs) }\n",
		"main.go":        "package main\n\nimport \"example.com/tw/stats\"\n\nfunc main() { println(stats.Sum(nil)) }\n",
	}, Config{})
	for _, f := range []string{"main.go", "stats/stats.go"} {
		if _, err := s.sup.CheckWritten(s.ctx, s.at(f), false); err != nil {
			t.Fatal(err)
		}
	}
	renamed := func(name string) {
		s.write("stats/stats.go", "package stats\n\nfunc "+name+"(xs []int) int { return len(xs) }\n")
		s.write("main.go", "package main\n\nimport \"example.com/tw/stats\"\n\nfunc main() { println(stats."+name+"(nil)) }\n")
	}
	errors := func(wc diag.WriteCheck) int {
		n := 0
		for _, d := range wc.Diagnostics {
			if d.Severity == 1 {
				n++
			}
		}
		return n
	}

	// The caller alone: gopls has the callee's old text.
	renamed("Total")
	wc, err := s.sup.CheckWritten(s.ctx, s.at("main.go"), false)
	if err != nil || wc.State != diag.Checked {
		t.Fatalf("main.go alone: %v %+v", err, wc.Verdict)
	}
	if errors(wc) == 0 {
		t.Fatalf("main.go checked before its callee was sent: no error, so this test shows nothing: %+v", wc.Diagnostics)
	}
	for _, f := range []string{"main.go", "stats/stats.go"} {
		if _, err := s.sup.CheckWritten(s.ctx, s.at(f), false); err != nil {
			t.Fatal(err)
		}
	}

	// Written together, as a call's report checks them.
	for round, name := range []string{"Count", "Size", "Len"} {
		renamed(name)
		s.sup.SyncWritten(s.ctx, []pathguard.Path{s.at("main.go"), s.at("stats/stats.go")})
		for _, f := range []string{"main.go", "stats/stats.go"} {
			wc, err := s.sup.CheckWritten(s.ctx, s.at(f), true)
			if err != nil || wc.State != diag.Checked {
				t.Fatalf("round %d, %s: %v %+v", round, f, err, wc.Verdict)
			}
			if n := errors(wc); n != 0 {
				t.Errorf("round %d, %s written together: %d errors: %+v", round, f, n, wc.Diagnostics)
			}
		}
	}
}
