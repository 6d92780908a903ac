package lsp

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// D2: a read-tier call runs no program from the checkout and no code of it
// unless the harness trusts the checkout.

// plant writes files under root; a name ending in "*" is an executable
// script that appends its own path to marker.
func plant(t *testing.T, root, marker string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
			text = "#!/bin/sh\necho \"$0\" >> " + marker + "\nexit 1\n"
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func readMarker(marker string) string {
	data, _ := os.ReadFile(marker)
	return strings.TrimSpace(string(data))
}

func TestUntrustedCheckoutRunsNoProgramOfIt(t *testing.T) {
	t.Parallel()
	testenv.LookPath(t, "pyright-langserver")
	testenv.LookPath(t, "typescript-language-server")
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	plant(t, root, marker, map[string]string{
		"pyproject.toml":                        "[project]\nname = \"x\"\n",
		"m.py":                                  "def f():\n    return 1\n",
		"package.json":                          `{"name": "x"}`,
		"tsconfig.json":                         `{"compilerOptions": {"strict": true}}`,
		"a.ts":                                  "export function g(): number { return 1; }\n",
		".venv/bin/pyright-langserver*":         "",
		".venv/bin/pyright*":                    "",
		"venv/bin/pyright-langserver*":          "",
		"node_modules/.bin/pyright-langserver*": "",
		"node_modules/.bin/typescript-language-server*": "",
		"node_modules/.bin/tsc*":                        "",
		"node_modules/.bin/pyright*":                    "",
		// typescript-language-server prefers the checkout's TypeScript.
		"node_modules/typescript/package.json":    `{"name": "typescript", "version": "5.9.3"}`,
		"node_modules/typescript/lib/tsserver.js": "require('fs').appendFileSync(" + jsString(marker) + ", 'tsserver.js\\n'); process.exit(1);\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	if _, err := sup.Hover(ctx, loc(t, sup, filepath.Join(root, "m.py")), protocol.Place{Line: 1, Symbol: "f"}); err != nil {
		t.Logf("hover m.py: %v", err)
	}
	if _, err := sup.Hover(ctx, loc(t, sup, filepath.Join(root, "a.ts")), protocol.Place{Line: 1, Symbol: "g"}); err != nil {
		t.Logf("hover a.ts: %v", err)
	}
	out, err := sup.Check(ctx)
	t.Logf("diagnostics *: %v\n%+v", err, out)
	status := sup.Status(ctx)
	t.Logf("status:\n%+v", status)
	sup.Close()
	if got := readMarker(marker); got != "" {
		t.Fatalf("an untrusted checkout's programs ran:\n%s", got)
	}
	if status.Trusted {
		t.Error("status: the checkout counts as trusted")
	}
	if row := statusRow(t, status, "typescript-language-server"); !slices.Contains(row.PassedOver, "node_modules/.bin/typescript-language-server") {
		t.Errorf("status: the checkout's typescript-language-server is not named as passed over: %+v", row.PassedOver)
	}

	// Trusted, the checkout's own tsc is the checker, as a developer's
	// shell would pick it.
	checkTrusted(t, root)
	if got := readMarker(marker); !strings.Contains(got, filepath.Join("node_modules", ".bin", "tsc")) {
		t.Fatalf("a trusted checkout's tsc did not run; ran: %q", got)
	}
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// cargo check runs build.rs: in an untrusted checkout diagnostics "*" says
// so and runs nothing, and the checkout is left as it was.
func TestUntrustedCargoCheckIsNotRun(t *testing.T) {
	t.Parallel()
	testenv.LookPath(t, "cargo")
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "build-rs-ran")
	plant(t, root, marker, map[string]string{
		"Cargo.toml":  "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":    "fn main() { std::fs::write(" + rustString(marker) + ", \"ran\").unwrap(); }\n",
		"src/main.rs": "fn main() {}\n",
	})
	before := listTree(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	out, err := sup.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnostics *: %+v", out)
	cargo := checkRun(t, out, "Rust")
	if cargo.Skipped != answer.SkipRunsCode || strings.Join(cargo.Command, " ") != "cargo check --message-format=short" || cargo.ExitCode != nil {
		t.Errorf("untrusted diagnostics *: want cargo check skipped as running code, got %+v", cargo)
	}
	expectContains(t, "untrusted diagnostics * reason", cargo.Reason, "build scripts (build.rs)")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("build.rs ran in an untrusted checkout")
	}
	if after := listTree(t, root); after != before {
		t.Fatalf("the checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	out, _ = checkTrusted(t, root)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("build.rs did not run in a trusted checkout: %v\n%+v", err, out)
	}
}

func rustString(s string) string { return "\"" + strings.ReplaceAll(s, "\"", "\\\"") + "\"" }

// clangd's background index stays in the server's private folder.
func TestClangdKeepsItsIndexOutsideTheRoot(t *testing.T) {
	t.Parallel()
	s := newSession(t, "c", "clangd", Config{})
	before := listTree(t, s.root)
	if out := must(s.sup.References(s.ctx, s.at("geometry.h"), protocol.Place{Line: 10, Symbol: "area"}))(t); out.Total != 3 {
		t.Errorf("references: want 3, got %d", out.Total)
	}
	s.sup.Close()
	if after := listTree(t, s.root); after != before {
		t.Fatalf("clangd wrote into the root:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// listTree names every entry under root, one a line.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(root, p)
			b.WriteString(rel + "\n")
		}
		return nil
	})
	return b.String()
}

// checkTrusted is diagnostics "*" of a trusted supervisor over root, on a
// clock of its own: under load the untrusted half of a test can use most
// of the first.
func checkTrusted(t *testing.T, root string) (*answer.CheckReport, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	trusted := NewSupervisor(root, Config{Trusted: true})
	defer trusted.Close()
	out, err := trusted.Check(ctx)
	t.Logf("trusted diagnostics *: %v\n%+v", err, out)
	return out, err
}
