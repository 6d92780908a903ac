package dap

import (
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// at is p's location under root, as a run's guard gives it.
func at(root, p string) pathguard.Path { return testenv.Path(root, p) }
