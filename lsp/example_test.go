package lsp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/builtin-tools/builtin-tools/lsp"
)

// A harness creates one Supervisor and one Ledger per run, answers `lsp`
// calls with its methods, and after each write appends only the new
// diagnostics to the write tool's result. Results are data; package
// lsptool renders them as the agent reads them.
func Example() {
	ctx := context.Background()
	root, _ := os.Getwd()
	sup := lsp.NewSupervisor(root, lsp.Config{}) // starts nothing yet
	defer sup.Close()
	ledger := lsp.NewLedger()

	// lsp status
	for _, s := range sup.Status(ctx).Servers {
		fmt.Println(s.ID, s.State)
	}

	// After the harness's write tool wrote main.go:
	// Locations come from the supervisor's path guard (a run's own guard
	// in a harness): confined, so no method takes an unchecked path.
	path := root + "/main.go"
	at, err := sup.Guard().Path(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	diags, err := sup.AfterWrite(ctx, at)
	if err != nil {
		fmt.Println("(diagnostics unavailable:", err, ")")
	}
	for _, d := range ledger.Fresh(path, diags, false) {
		fmt.Printf("new: %d:%d: %s: %s\n", d.Line, d.Column, d.Severity, d.Message)
	}

	// lsp definition
	defs, err := sup.Definition(ctx, at, lsp.Place{Line: 12, Symbol: "Total"})
	if err != nil {
		fmt.Println(err) // readable: says what to do
		return
	}
	for _, l := range defs.Locations {
		fmt.Printf("%s:%d: %s\n", l.Path, l.Line, l.Text)
	}
}
