package astgrep

import (
	"sync"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

var guards sync.Map // root -> *pathguard.Guard, kept for the test binary

// at is the location path (root itself when none) under root, from a
// guard for root as a run's would be.
func at(root string, path ...string) pathguard.Path {
	v, ok := guards.Load(root)
	if !ok {
		g, err := pathguard.New(root)
		if err != nil {
			panic(err)
		}
		v, _ = guards.LoadOrStore(root, g)
	}
	g := v.(*pathguard.Guard)
	if len(path) == 0 {
		return g.RootPath()
	}
	p, err := g.Path(path[0])
	if err != nil {
		panic(err)
	}
	return p
}
