package lsp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A harness creates one Supervisor and one Ledger per run, answers `lsp`
// calls with its methods, and after each write appends only the new
// diagnostics to the write tool's result. Results are data; package
// lsptool renders them as the agent reads them. (It runs gopls, which
// scripts/install.sh installs.)
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "shop")
	defer os.RemoveAll(root)
	write := func(src string) {
		os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc Total() int { return 1 }\n\nfunc main() {\n"+src+"}\n"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/shop\n\ngo 1.22\n"), 0o644)
	write("\t_ = Total()\n")

	g, err := pathguard.New(root) // the run's path guard, in a harness
	if err != nil {
		panic(err)
	}
	defer g.Close()
	sup := lsp.OpenSupervisor(g, lsp.Config{}) // starts nothing yet
	defer sup.Close()
	ledger := diag.NewLedger()

	// lsp status: gopls has its marker (go.mod) and its program.
	for _, s := range sup.Status(ctx).Servers {
		if s.ID == "gopls" {
			fmt.Println(s.ID, s.State)
		}
	}

	// lsp definition. Locations come from the guard: no method takes an
	// unchecked path.
	at, err := g.Path("main.go")
	if err != nil {
		panic(err)
	}
	defs, err := sup.Definition(ctx, at, protocol.Place{Line: 6, Symbol: "Total"})
	if err != nil {
		fmt.Println(err) // readable: says what to do
		return
	}
	for _, l := range defs.Locations {
		fmt.Printf("%s:%d: %s\n", l.Path, l.Line, l.Text)
	}

	// After the harness's write tool wrote main.go: the new diagnostics.
	write("\t_ = Totl()\n")
	diags, err := sup.AfterWrite(ctx, at)
	if err != nil {
		fmt.Println("(diagnostics unavailable:", err, ")")
	}
	for _, d := range ledger.Fresh(filepath.Join(g.Root(), "main.go"), diags, false) {
		fmt.Printf("new: %d:%d: %s\n", d.Line, d.Column, d.Message)
	}
	// Output:
	// gopls available
	// main.go:3: func Total() int { return 1 }
	// new: 6:6: undefined: Totl
}
