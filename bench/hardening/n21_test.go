//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// N21: the code graph's snapshot is not stale after an in-place rewrite
// that keeps the size and restores the mtime.
func TestN21(t *testing.T) { runCase(t, "N21", caseN21) }

func caseN21(c *cx) {
	root := c.root
	cache := filepath.Join(c.base, "graph-cache")
	a := filepath.Join(root, "a.go")
	writeFile(a, "package p\n\nfunc Alpha() {}\n")
	graph := func(sym string) callOut {
		return c.graph(root, []string{"--graph-cache", cache}, "find", fmt.Sprintf(`"symbol":%q`, sym))
	}
	first := graph("Alpha")
	fi, err := os.Stat(a)
	check(err)
	f, err := os.OpenFile(a, os.O_WRONLY, 0) // in place: same inode, same size
	check(err)
	_, err = f.WriteAt([]byte("func Omega() {}\n"), int64(len("package p\n\n")))
	check(err)
	check(f.Close())
	check(os.Chtimes(a, fi.ModTime(), fi.ModTime()))
	omega, alpha := graph("Omega"), graph("Alpha")
	stale := !strings.Contains(omega.stdout, "a.go:3") || strings.Contains(alpha.stdout, "p.Alpha (a.go")
	c.line("code_graph find after a.go is rewritten in place (same size, mtime restored): Omega; Alpha",
		fmt.Sprintf("first Alpha: %s; then Omega: %s; Alpha: %s", first.summary(60), omega.summary(80), alpha.summary(80)), "Omega: \"no definition matches\"; Alpha: function p.Alpha (a.go:3) `func Omega() {}`")
	c.want(!stale, "Omega found at a.go:3, Alpha gone")
}
