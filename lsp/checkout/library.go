package checkout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// Hover text of a symbol declared outside the root is withheld (N4): it
// quotes the declaration, and a checkout can point a server at any file on
// the machine (a go.mod replace, a relative import). Library code that a
// toolchain or package manager installed — the standard library, the
// module cache, node_modules, system headers — is public, and hover on
// fmt.Println or console.log is what a model asks most; so its text is
// quoted. Nothing the checkout names can move a file into these folders.

var libraryDirs = sync.OnceValue(func() []string {
	var dirs []string
	add := func(d string) {
		if d == "" {
			return
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if filepath.IsAbs(d) && d != "/" {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		// In the neutral folder and pinned: no checkout's go.mod picks a
		// toolchain for this.
		cmd := exec.Command(goBin, "env", "GOROOT", "GOMODCACHE")
		cmd.Dir = proc.NeutralDir
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
		if out, err := proc.Output(context.Background(), cmd); err == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				add(strings.TrimSpace(l))
			}
		}
	}
	home, _ := os.UserHomeDir()
	for _, d := range []string{"/usr/include", "/usr/local/include", "/usr/lib", "/usr/local/lib", "/usr/share"} {
		add(d)
	}
	if home != "" {
		for _, d := range []string{".rustup/toolchains", ".cargo/registry", ".pyenv/versions", "go/pkg/mod"} {
			add(filepath.Join(home, d))
		}
	}
	if pr := os.Getenv("PYENV_ROOT"); pr != "" {
		add(filepath.Join(pr, "versions"))
	}
	return dirs
})

// isLibrary reports whether path (absolute, links resolved) lies in a
// folder of installed library code: one of libraryDirs, or a node_modules
// folder.
func isLibrary(path string) bool {
	for _, d := range libraryDirs() {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return strings.Contains(path, string(filepath.Separator)+"node_modules"+string(filepath.Separator))
}

// InLibrary reports whether uri names a file of installed library code,
// links resolved: its text may be quoted though it is outside the root.
func InLibrary(uri string) bool {
	path, ok := protocol.URIPath(uri)
	if !ok {
		return false
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	return isLibrary(path)
}
