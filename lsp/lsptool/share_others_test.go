package lsptool_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// shareCase is a project for one server: a function with a caller, and a
// write that breaks the caller.
type shareCase struct {
	program string // the server's program, as in its process's command line
	tree    map[string]string
	file    string // references to line/symbol in file list ref
	line    int
	symbol  string
	ref     string
	write   string // the file the break is written to, with its text
	broken  string
	want    string // in the break's new diagnostic
}

var shareCases = []shareCase{{
	program: "typescript-language-server",
	tree: map[string]string{
		"package.json":  `{"name": "shop", "version": "0.1.0", "private": true}`,
		"tsconfig.json": `{"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": true, "noEmit": true}, "include": ["src"]}`,
		"src/cart.ts":   "export function total(xs: number[]): number {\n  return xs.length;\n}\n",
		"src/use.ts":    "import { total } from \"./cart\";\n\nexport const n = total([1, 2]);\n",
	},
	file: "src/cart.ts", line: 1, symbol: "total", ref: "src/use.ts:3",
	write: "src/use.ts", broken: "import { total } from \"./cart\";\n\nexport const n: string = total([1, 2]);\n",
	want: "not assignable to type 'string'",
}, {
	program: "clangd",
	tree: map[string]string{
		"compile_flags.txt": "-std=c11\n",
		"cart.h":            "int total(int n);\n",
		"cart.c":            "#include \"cart.h\"\n\nint total(int n) { return n * 2; }\n",
		"use.c":             "#include \"cart.h\"\n\nint use(void) { return total(3); }\n",
	},
	file: "use.c", line: 3, symbol: "total", ref: "use.c:3",
	write: "use.c", broken: "#include \"cart.h\"\n\nint use(void) { return total(\"x\"); }\n",
	want: "Incompatible pointer to integer conversion",
}}

// LSP-7 on typescript-language-server and clangd: three runs of one
// process over one project share one server, which each run's status
// lists with its three clients; a break written by one run is reported
// to it; the server (with tsserver under it) stops when the last run
// closes.
func TestRunsShareOtherServers(t *testing.T) {
	for _, tc := range shareCases {
		t.Run(tc.program, func(t *testing.T) {
			testenv.LookPath(t, tc.program)
			root := t.TempDir()
			if resolved, err := filepath.EvalSymlinks(root); err == nil {
				root = resolved
			}
			testenv.WriteTree(t, root, tc.tree)
			pl := pool.New()
			var runs []*registry.Run
			for i := range 3 {
				r := poolRun(t, root, lsp.Config{Pool: pl})
				runs = append(runs, r)
				text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": tc.file, "line": tc.line, "symbol": tc.symbol})
				if isErr || !strings.Contains(text, tc.ref) {
					t.Fatalf("run %d: references: %q", i+1, text)
				}
			}
			if pids := serversIn("", tc.program); len(pids) != 1 {
				t.Fatalf("3 runs over one project: want 1 %s, got %v", tc.program, pids)
			}
			for i, r := range runs {
				_, st := poolStatus(t, r)
				if len(st.Pool.Servers) != 1 || st.Pool.Servers[0].Clients != 3 || !st.Pool.Servers[0].ThisRun || st.Pool.Servers[0].MemoryKB <= 0 {
					t.Fatalf("run %d: the pool: %+v", i+1, st.Pool)
				}
				if i == 0 {
					t.Logf("the shared %s: pid %d, %d runs, %d KiB resident with its children", tc.program,
						st.Pool.Servers[0].PID, st.Pool.Servers[0].Clients, st.Pool.Servers[0].MemoryKB)
				}
			}
			text, _ := call(t, runs[1], tiers.Normal, "write", map[string]any{"path": tc.write, "content": tc.broken})
			if !strings.Contains(text, "New diagnostics") || !strings.Contains(text, tc.want) {
				t.Fatalf("run 2's break: %q", text)
			}
			for _, r := range runs {
				r.Close()
			}
			if got := pl.Servers(); len(got) != 0 {
				t.Fatalf("after the last run closed the pool holds %+v", got)
			}
			if pids := serversIn("", tc.program); len(pids) != 0 {
				t.Fatalf("after the last run closed: %s %v still runs", tc.program, pids)
			}
		})
	}
}
