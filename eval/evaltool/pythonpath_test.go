package evaltool_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// pythonProject is a checkout with a flat package mypkg and a src-layout
// package srcpkg (a pyproject for an editable install).
var pythonProject = map[string]string{
	"mypkg/__init__.py":      "NAME = 'flat'\n",
	"src/srcpkg/__init__.py": "NAME = 'src'\n",
	"pyproject.toml":         "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"srcpkg\"\nversion = \"0.1\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
	"kernel.py":              "raise SystemExit('the checkout has a kernel.py of its own')\n",
}

func pythonRunAt(t *testing.T, root, interp string) *registry.Run {
	t.Helper()
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"}, Settings: map[string]any{"eval": eval.Config{Python: interp}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func venv(t *testing.T, root string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-m", "venv"}, append(args, filepath.Join(root, ".venv"))...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Unavailable(t, "python3 -m venv", fmt.Errorf("%v: %s", err, out))
	}
	return filepath.Join(root, ".venv", "bin", "python")
}

// Issue 19 §1: the kernel imports the checkout's own packages: the root is
// first on sys.path (before, sys.path[0] was the kernel's temporary
// folder, so `import mypkg` failed, also with a .venv); the driver's folder
// is not on it at all. A src layout installed in the venv (editable, by
// pip or by a .pth file) imports too.
func TestPythonImportsProject(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	check := func(t *testing.T, r *registry.Run) {
		t.Helper()
		_, text := cell(t, r, tiers.Normal, "import sys, os, mypkg\nprint(sys.path[0] == os.getcwd(), mypkg.NAME)")
		want(t, text, "True flat")
		_, text = cell(t, r, tiers.Normal, "import kernel")
		want(t, text, "the checkout has a kernel.py of its own")
	}
	t.Run("system", func(t *testing.T) {
		root := t.TempDir()
		testenv.WriteTree(t, root, pythonProject)
		check(t, pythonRunAt(t, root, python))
	})
	t.Run("venv", func(t *testing.T) {
		root := t.TempDir()
		testenv.WriteTree(t, root, pythonProject)
		venv(t, root, "--without-pip")
		r := pythonRunAt(t, root, "") // the checkout's .venv, found by the run
		_, text := cell(t, r, tiers.Normal, "import sys\nsys.prefix")
		want(t, text, filepath.Join(root, ".venv"))
		check(t, r)
	})
	t.Run("src-pth", func(t *testing.T) {
		root := t.TempDir()
		testenv.WriteTree(t, root, pythonProject)
		py := venv(t, root, "--without-pip")
		out, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(strings.TrimSpace(string(out)), 0o755)
		testenv.WriteTree(t, strings.TrimSpace(string(out)), map[string]string{"srcpkg.pth": filepath.Join(root, "src") + "\n"})
		r := pythonRunAt(t, root, "")
		_, text := cell(t, r, tiers.Normal, "import srcpkg, mypkg\nsrcpkg.NAME + ' ' + mypkg.NAME")
		want(t, text, "'src flat'")
	})
	t.Run("src-pip-editable", func(t *testing.T) {
		root := t.TempDir()
		testenv.WriteTree(t, root, pythonProject)
		// setuptools' editable build needs wheel, which the system has.
		py := venv(t, root, "--system-site-packages")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "-e", ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			testenv.Unavailable(t, "pip install -e (offline, setuptools in the venv)", fmt.Errorf("%v: %s", err, out))
		}
		r := pythonRunAt(t, root, "")
		_, text := cell(t, r, tiers.Normal, "import srcpkg, mypkg\nsrcpkg.NAME + ' ' + mypkg.NAME")
		want(t, text, "'src flat'")
	})
}
