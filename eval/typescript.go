package eval

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// typescript finds the TypeScript compiler's lib/typescript.js for
// typescript cells: the configured one, the checkout's own (its cells run
// the checkout's code anyway), else the one installed beside tsc or
// typescript-language-server on PATH (scripts/install-lsp.sh puts both in
// .tools/node_modules).
func (h *Host) typescript() (string, error) {
	if p := h.cfg.TypeScript; p != "" {
		if js := compilerFile(p); js != "" {
			return js, nil
		}
		return "", fmt.Errorf("the TypeScript compiler configured for eval (%s) has no lib/typescript.js; give the typescript package's folder", p)
	}
	if js := compilerFile(filepath.Join(h.root, "node_modules", "typescript")); js != "" {
		return js, nil
	}
	for _, bin := range []string{"tsc", "typescript-language-server"} {
		p, err := exec.LookPath(bin)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		// tsc is typescript/bin/tsc; the server's own node_modules (or the
		// folder it is installed in) holds typescript.
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			for _, cand := range []string{filepath.Join(dir, "node_modules", "typescript"), dir} {
				if filepath.Base(cand) == "typescript" {
					if js := compilerFile(cand); js != "" {
						return js, nil
					}
				}
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", errors.New("`language: typescript` needs the TypeScript compiler, and none was found (not in the checkout's node_modules/typescript, nor beside tsc or typescript-language-server on PATH); " +
		"install it (npm install typescript, or scripts/install-lsp.sh), or run the cell as `language: javascript`")
}

// compilerFile is p's lib/typescript.js when p is the typescript package
// (or that file itself), else "".
func compilerFile(p string) string {
	for _, f := range []string{p, filepath.Join(p, "lib", "typescript.js")} {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && filepath.Base(f) == "typescript.js" {
			return f
		}
	}
	return ""
}
