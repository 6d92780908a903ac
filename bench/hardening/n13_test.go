//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// N13: hover quotes nothing from outside the root: a Go replace directive
// to ../secret, and a TypeScript relative import of ../outside/secret.
func TestN13(t *testing.T) { runCase(t, "N13", caseN13) }

func caseN13(c *cx) {
	c.sub("go replace", func(c *cx) {
		c.need("gopls")
		root, outside := c.pair("go")
		secret := filepath.Join(filepath.Dir(outside), "secret")
		writeFile(filepath.Join(secret, "go.mod"), "module example.com/sec\n\ngo 1.22\n")
		writeFile(filepath.Join(secret, "s.go"), "package sec\n\n// Token is the production API token.\nconst Token = \"sk-live-THIS-IS-OUTSIDE-THE-ROOT\"\n")
		writeFile(filepath.Join(root, "go.mod"), "module example.com/leak\n\ngo 1.22\n\nrequire example.com/sec v0.0.0\n\nreplace example.com/sec => ../secret\n")
		writeFile(filepath.Join(root, "main.go"), "package main\n\nimport \"example.com/sec\"\n\nfunc main() {\n\tprintln(sec.Token)\n}\n")
		rd := c.call(root, nil, "--root", root, "read", `{"path":"../secret/s.go"}`)
		o := c.call(root, nil, "--root", root, "--mode", "readonly", "lsp", `{"operation":"hover","file":"main.go","line":6,"symbol":"Token"}`)
		leak := strings.Contains(o.stdout, "sk-live") || strings.Contains(o.stdout, "production API token")
		c.line("Go, go.mod replace => ../secret: readonly hover of sec.Token quotes the outside file?",
			fmt.Sprintf("%s (%s); read of it: %s", yesNo(leak), o.summary(160), rd.summary(60)), "yes: const sec.Token untyped string = \"sk-live-THIS-IS-OUTSIDE-THE-ROOT\", \"Token is the production API token.\"; read of it refused")
		c.want(!leak && o.err == nil && !o.timedOut, "the hover answered without the outside value or doc comment")
	})
	c.sub("ts import", func(c *cx) {
		c.need("typescript-language-server")
		root, outside := c.pair("ts")
		writeFile(filepath.Join(outside, "secret.ts"), "/** The production token. */\nexport const token = \"sk-live-TS-OUTSIDE-SECRET\";\n")
		writeFile(filepath.Join(root, "package.json"), "{\"name\":\"leak\"}\n")
		writeFile(filepath.Join(root, "tsconfig.json"), "{\"compilerOptions\":{\"strict\":true}}\n")
		writeFile(filepath.Join(root, "a.ts"), "import { token } from \"../outside/secret\";\nconsole.log(token);\n")
		o := c.call(root, nil, "--root", root, "--mode", "readonly", "lsp", `{"operation":"hover","file":"a.ts","line":2,"symbol":"token"}`)
		leak := strings.Contains(o.stdout, "sk-live") || strings.Contains(o.stdout, "production token")
		c.line("TypeScript, import from ../outside/secret: readonly hover of token quotes the outside file?",
			fmt.Sprintf("%s (%s)", yesNo(leak), o.summary(160)), "yes: (alias) const token: \"sk-live-TS-OUTSIDE-SECRET\", \"The production token.\"")
		c.want(!leak && o.err == nil && !o.timedOut, "the hover answered without the outside value")
	})
}
