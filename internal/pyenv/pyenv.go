// Package pyenv finds a checkout's own Python interpreter, which the exec
// tools (debug, eval) prefer, as a developer's shell would.
package pyenv

import (
	"os"
	"path/filepath"
)

// Interpreter returns the checkout's .venv/bin/python or venv/bin/python,
// "" when it has neither.
func Interpreter(root string) string {
	for _, v := range []string{".venv/bin/python", "venv/bin/python"} {
		p := filepath.Join(root, v)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
