package structural_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// N3: resolve wrote whatever ast_edit staged, repository metadata too: a
// Python hook in .git/hooks rewritten to run a command, with exec=deny.
// The commit plan refuses it, and with --allow-git-writes it is an exec
// change that exec=deny refuses.
func TestResolveRefusesGitMetadata(t *testing.T) {
	git := testenv.LookPath(t, "git")
	const hook = "import sys\nprint(1)\n"
	for _, allow := range []bool{false, true} {
		r := newRun(t, map[string]string{"main.py": "print(1)\n"},
			builtintools.Options{Policy: registry.Policy{tiers.Exec: registry.Deny}, AllowGitWrites: allow})
		if out, err := exec.Command(git, "init", "-q", r.Root()).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		hookPath := filepath.Join(r.Root(), ".git", "hooks", "post-checkout.py")
		if err := os.WriteFile(hookPath, []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
		text, isErr := call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "print($A)", "rewrite": "__import__('os').system('touch PWNED')",
			"path": ".git/hooks/post-checkout.py", "language": "python"})
		if isErr {
			t.Fatalf("ast_edit: %s", text)
		}
		text, isErr = call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
		want := "repository's metadata"
		if allow {
			want = "exec=deny"
		}
		if !isErr || !strings.Contains(text, want) || !strings.Contains(text, ".git/hooks/post-checkout.py") {
			t.Errorf("allow-git-writes %v: resolve: (error=%v) %s", allow, isErr, text)
		}
		if data, _ := os.ReadFile(hookPath); string(data) != hook {
			t.Errorf("allow-git-writes %v: the hook was rewritten:\n%s", allow, data)
		}
	}
}
