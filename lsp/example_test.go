package lsp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/builtin-tools/builtin-tools/lsp"
)

// A harness creates one Supervisor and one Ledger per run, answers `lsp`
// calls with its methods, and after each write appends only the new
// diagnostics to the write tool's result.
func Example() {
	ctx := context.Background()
	root, _ := os.Getwd()
	sup := lsp.NewSupervisor(root, lsp.Config{}) // starts nothing yet
	defer sup.Close()
	ledger := lsp.NewLedger()

	// lsp status
	fmt.Println(sup.Status(ctx))

	// After the harness's write tool wrote main.go:
	path := root + "/main.go"
	diags, err := sup.AfterWrite(ctx, path)
	if err != nil {
		fmt.Println("(diagnostics unavailable:", err, ")")
	}
	if text := lsp.FormatDiagnostics(root, ledger.Fresh(path, diags, false)); text != "" {
		fmt.Println("New diagnostics:\n" + text)
	}

	// lsp definition
	out, err := sup.Definition(ctx, path, 12, "Total")
	if err != nil {
		fmt.Println(err) // readable: says what to do
		return
	}
	fmt.Println(out)
}
