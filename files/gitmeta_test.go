package files_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/asktest"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// gitRepo makes a real repository (git init) with one committed file and
// returns its root.
func gitRepo(t *testing.T) string {
	t.Helper()
	git := testenv.LookPath(t, "git")
	root := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "a.txt"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

func gitStatus(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	return string(out)
}

func metaRun(t *testing.T, root string, policy registry.Policy, allow bool, ask askuser.Port) *registry.Run {
	t.Helper()
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Policy: policy, AllowGitWrites: allow, Ask: ask,
		Without: []string{"lsp", "structural", "code_graph", "debug", "eval", "vibe"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// N3: write, edit and apply_patch changed .git/ — a core.fsmonitor
// command in .git/config, an executable .git/hooks/pre-commit — even with
// exec=deny, and the next git status ran the command while showing neither
// change. Repository metadata is refused by default: .git at any depth, a
// bare repository, the folder a gitdir: file names; and git status then
// runs nothing and shows every change the tools did make.
func TestWriteToolsRefuseGitMetadata(t *testing.T) {
	root := gitRepo(t)
	pwned := filepath.Join(filepath.Dir(root), "PWNED")
	// A nested repository, a bare one, and a submodule-like .git file.
	gitRepoAt(t, filepath.Join(root, "nested"))
	bare := filepath.Join(root, "store")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	os.MkdirAll(filepath.Join(root, "mod"), 0o755)
	os.WriteFile(filepath.Join(root, "mod", ".git"), []byte("gitdir: ../store\n"), 0o644)
	r := metaRun(t, root, registry.Policy{tiers.Exec: registry.Deny}, false, nil)
	hook := "#!/bin/sh\ntouch " + pwned + "\n"
	cases := []struct {
		tool string
		args map[string]any
		path string
	}{
		{"write", map[string]any{"path": ".git/hooks/pre-commit", "content": hook}, ".git/hooks/pre-commit"},
		{"edit", map[string]any{"path": ".git/config", "old_string": "[core]\n", "new_string": "[core]\n\tfsmonitor = \"touch " + pwned + "; false\"\n"}, ".git/config"},
		{"apply_patch", map[string]any{"patch": "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch " + pwned + "\n"}, ".git/hooks/pre-commit"},
		{"write", map[string]any{"path": ".git/description", "content": "x\n"}, ".git/description"},
		{"write", map[string]any{"path": "nested/.git/hooks/post-checkout", "content": hook}, "nested/.git/hooks/post-checkout"},
		{"write", map[string]any{"path": "store/hooks/pre-commit", "content": hook}, "store/hooks/pre-commit"},
		{"write", map[string]any{"path": "store/config", "content": "[core]\n\tfsmonitor = x\n"}, "store/config"},
		{"write", map[string]any{"path": "mod/.git", "content": "gitdir: ../elsewhere\n"}, "mod/.git"},
		{"write", map[string]any{"path": "sub/.GIT/config", "content": "[core]\n"}, "sub/.GIT/config"},
		// A git folder assembled piece by piece: the piece that would make
		// it one is refused.
		{"write", map[string]any{"path": "fake/HEAD", "content": "ref: refs/heads/main\n"}, ""},
		{"write", map[string]any{"path": "fake/objects/x", "content": "x"}, ""},
		{"write", map[string]any{"path": "fake/refs/x", "content": "x"}, "fake/refs/x"},
	}
	before := testenv.Snapshot(t, root)
	for _, tc := range cases {
		_, existed := os.Lstat(filepath.Join(root, tc.path))
		text, isErr := runtest.Call(t, r, tiers.Normal, tc.tool, tc.args)
		if tc.path == "" {
			if isErr {
				t.Errorf("%s %v: %s", tc.tool, tc.args["path"], text)
			}
			continue
		}
		if !isErr || !strings.Contains(text, "repository's metadata") || !strings.Contains(text, "--allow-git-writes") || !strings.Contains(text, "was not changed") {
			t.Errorf("%s of %s: (error=%v) %s", tc.tool, tc.path, isErr, text)
		}
		if _, err := os.Lstat(filepath.Join(root, tc.path)); err == nil && existed != nil {
			t.Errorf("%s: %s was created", tc.tool, tc.path)
		}
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, root)); d != "added fake, added fake/HEAD, added fake/objects, added fake/objects/x" {
		t.Errorf("the tools changed: %s", d)
	}
	if got := gitStatus(t, root); strings.Contains(got, ".git") || !strings.Contains(got, "fake/") {
		t.Errorf("git status --porcelain:\n%s", got)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("git ran a command the write tools put in the repository's metadata")
	}
}

func gitRepoAt(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// N3: with --allow-git-writes, metadata that is data (.git/description)
// is written, and what git executes (config, hooks/, info/) is an exec
// change: refused with exec=deny, asked with exec=ask (the approver sees
// the exec tier and the file), written with exec=allow.
func TestAllowGitWritesStillGatesWhatGitExecutes(t *testing.T) {
	root := gitRepo(t)
	hook := map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nexit 0\n"}
	r := metaRun(t, root, registry.Policy{tiers.Exec: registry.Deny}, true, nil)
	if text, isErr := runtest.Call(t, r, tiers.Normal, "write", map[string]any{"path": ".git/description", "content": "mine\n"}); isErr {
		t.Fatalf("write .git/description with --allow-git-writes: %s", text)
	}
	for _, args := range []map[string]any{hook, {"path": ".git/info/attributes", "content": "* filter=x\n"},
		{"path": ".git/config.worktree", "content": "[core]\n"}} {
		text, isErr := runtest.Call(t, r, tiers.Normal, "write", args)
		if !isErr || !strings.Contains(text, "needs exec approval") || !strings.Contains(text, "exec=deny") {
			t.Errorf("write %s with exec=deny: (error=%v) %s", args["path"], isErr, text)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("the hook was written with exec=deny")
	}
	port := asktest.New("Deny")
	r = metaRun(t, root, registry.Policy{tiers.Exec: registry.Ask}, true, port)
	text, isErr := runtest.Call(t, r, tiers.Normal, "write", hook)
	if !isErr || !strings.Contains(text, "the operator denied it") || len(port.Cards()) != 1 ||
		!strings.Contains(port.Cards()[0], "(a exec tool)") || !strings.Contains(port.Cards()[0], ".git/hooks/pre-commit") {
		t.Fatalf("exec=ask, denied: (error=%v) %s; asked %q", isErr, text, port.Cards())
	}
	r = metaRun(t, root, registry.Policy{tiers.Exec: registry.Allow}, true, nil)
	if text, isErr := runtest.Call(t, r, tiers.Normal, "write", hook); isErr {
		t.Fatalf("exec=allow: %s", text)
	}
}
