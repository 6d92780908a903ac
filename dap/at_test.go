package dap

import (
	"sync"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

var guards sync.Map // root -> *pathguard.Guard, kept for the test binary

// at is p's location under root (relative to it, or absolute), from a guard
// for root as a run's would be.
func at(root, p string) pathguard.Path {
	v, ok := guards.Load(root)
	if !ok {
		g, err := pathguard.New(root)
		if err != nil {
			panic(err)
		}
		v, _ = guards.LoadOrStore(root, g)
	}
	loc, err := v.(*pathguard.Guard).Path(p)
	if err != nil {
		panic(err)
	}
	return loc
}
