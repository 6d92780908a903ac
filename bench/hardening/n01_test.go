//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// N1: a read tool runs no program from the checkout through a toolchain
// manager: rustup's proxy on PATH picks the toolchain a rust-toolchain.toml
// names, and `path = "<root>/tc"` is a folder of the checkout.
func TestN1(t *testing.T) { runCase(t, "N1", caseN1) }

func caseN1(c *cx) {
	rustup := c.need("rustup")
	root, outside := c.root, c.outside
	marker := filepath.Join(outside, "PWNED-toolchain")
	for _, p := range []string{"rustc", "cargo", "rust-analyzer", "rustfmt"} {
		script(filepath.Join(root, "tc", "bin", p), fmt.Sprintf("echo \"checkout program ran: $0 $*\" >> %s\necho '%s 1.99.0 (fake)'\n", marker, p))
	}
	writeFile(filepath.Join(root, "rust-toolchain.toml"), fmt.Sprintf("[toolchain]\npath = %q\n", filepath.Join(root, "tc")))
	writeFile(filepath.Join(root, "Cargo.toml"), "[package]\nname = \"rs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	writeFile(filepath.Join(root, "src", "main.rs"), "fn helper() -> i32 { 1 }\n\nfn main() {\n    println!(\"{}\", helper());\n}\n")
	env := c.env(filepath.Dir(rustup)) // the proxies first, as a rustup install has them
	ran := func() int { return strings.Count(readFile(marker), "checkout program ran") }

	for _, call := range []struct {
		name, dir, args, before string
	}{
		{"status", root, `{"operation":"status"}`, "1 (tc/bin/rust-analyzer --version, the probe)"},
		{"symbols", c.tmp, `{"operation":"symbols","file":"src/main.rs"}`, "0 (its probe ran outside the root, got the default toolchain, which lacks rust-analyzer, so no server started)"},
		{"hover", root, `{"operation":"hover","file":"src/main.rs","line":4,"symbol":"helper"}`, "2 (tc/bin/rust-analyzer --version, then tc/bin/rust-analyzer: the probe and the server start)"},
	} {
		c.sub(call.name, func(c *cx) {
			n0 := ran()
			o := c.call(call.dir, env, "--root", root, "--mode", "readonly", "lsp", call.args)
			n := ran() - n0
			c.line(fmt.Sprintf("readonly lsp %s (cwd %s) with rust-toolchain.toml path = <root>/tc: checkout programs run", call.name, map[bool]string{true: "the root", false: "outside"}[call.dir == root]),
				fmt.Sprintf("%d (%s)", n, o.summary(160)), call.before)
			c.want(n == 0, "no checkout program run; ran: %s", excerpt(readFile(marker), 300))
		})
	}
}
