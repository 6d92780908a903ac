package structural_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/asktest"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const hookSource = "import sys\nprint(1)\n"

// stagedHookEdit makes a run with opts over a git repository whose
// .git/hooks/post-checkout.py is hookSource, and stages (ast_edit) a rewrite of
// that hook; it returns the run and the hook's path.
func stagedHookEdit(t *testing.T, opts builtintools.Options) (*registry.Run, string) {
	t.Helper()
	git := testenv.LookPath(t, "git")
	r := newRun(t, map[string]string{"main.py": "print(1)\n"}, opts)
	if out, err := exec.Command(git, "init", "-q", r.Root()).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	hookPath := filepath.Join(r.Root(), ".git", "hooks", "post-checkout.py")
	if err := os.WriteFile(hookPath, []byte(hookSource), 0o755); err != nil {
		t.Fatal(err)
	}
	text, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "print($A)", "rewrite": "__import__('os').system('touch PWNED')",
		"path": ".git/hooks/post-checkout.py", "language": "python"})
	if isErr {
		t.Fatalf("ast_edit: %s", text)
	}
	return r, hookPath
}

// N3: resolve wrote whatever ast_edit staged, repository metadata too: a
// Python hook in .git/hooks rewritten to run a command, with exec=deny.
// The commit plan refuses it, and with --allow-git-writes it is an exec
// change that exec=deny refuses.
func TestResolveRefusesGitMetadata(t *testing.T) {
	for _, allow := range []bool{false, true} {
		r, hookPath := stagedHookEdit(t, builtintools.Options{Policy: registry.Policy{tiers.Exec: registry.Deny}, AllowGitWrites: allow})
		text, isErr := runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
		want := "repository's metadata"
		if allow {
			want = "exec=deny"
		}
		if !isErr || !strings.Contains(text, want) || !strings.Contains(text, ".git/hooks/post-checkout.py") {
			t.Errorf("allow-git-writes %v: resolve: (error=%v) %s", allow, isErr, text)
		}
		if data, _ := os.ReadFile(hookPath); string(data) != hookSource {
			t.Errorf("allow-git-writes %v: the hook was rewritten:\n%s", allow, data)
		}
	}
}

// Under exec=ask, resolve's write of a hook escalates to exec and the
// operator is asked, with the hook's path on the card: the tool's own
// approval hook (which judges resolve's action) is not what decides.
func TestResolveAsksExecForAHook(t *testing.T) {
	port := asktest.New("Deny")
	r, hookPath := stagedHookEdit(t, builtintools.Options{Policy: registry.Policy{tiers.Exec: registry.Ask}, AllowGitWrites: true, Ask: port})
	text, isErr := runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
	if !isErr || !strings.Contains(text, "the operator denied it") || len(port.Cards()) != 1 ||
		!strings.Contains(port.Cards()[0], "(a exec tool)") || !strings.Contains(port.Cards()[0], ".git/hooks/post-checkout.py") {
		t.Errorf("resolve under exec=ask: (error=%v) %s; asked %q", isErr, text, port.Cards())
	}
	if data, _ := os.ReadFile(hookPath); string(data) != hookSource {
		t.Errorf("the hook was rewritten without asking:\n%s", data)
	}
}
