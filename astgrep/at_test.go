package astgrep

import (
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// at is a location under root, as a run's guard gives it.
func at(root string, path ...string) pathguard.Path { return testenv.Path(root, path...) }
