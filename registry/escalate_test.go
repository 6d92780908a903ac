package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// N3: a write tool that is about to change something git executes passes
// the gate again at the exec tier, mid-call: the exec policy decides, and
// an approver asked sees the exec tier and the path.
func TestEscalateToExec(t *testing.T) {
	tool := toolOf("hook", tiers.Write, func(ctx context.Context, c *registry.Call) (string, error) {
		if err := c.Escalate(ctx, tiers.Exec, ".git/hooks/pre-commit"); err != nil {
			return "", err
		}
		return "wrote the hook", nil
	})
	fam := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("hooks"), Tools: []registry.Descriptor{tool}}
	var asked []string
	approver := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		asked = append(asked, string(c.Tool.Tier)+" "+string(c.Args))
		return c.Tool.Tier != tiers.Exec, "the operator denied it", nil
	})
	for _, tc := range []struct {
		policy registry.Policy
		want   string
		asks   []string
	}{
		{nil, "wrote the hook", nil},
		{registry.Policy{tiers.Exec: registry.Deny}, "hook is refused: this run's approval policy denies exec tools (exec=deny)", nil},
		{registry.Policy{tiers.Write: registry.Deny, tiers.Exec: registry.Allow}, "write=deny", nil},
		{registry.Policy{tiers.Write: registry.Ask, tiers.Exec: registry.Ask}, "the operator denied it",
			[]string{"write {}", `exec {"path":".git/hooks/pre-commit"}`}},
	} {
		asked = nil
		r := newRun(t, registry.Config{Families: []registry.Extension{fam}, Policy: tc.policy, Approver: approver})
		text, _ := call(t, r, tiers.Normal, "hook", `{}`)
		if !strings.Contains(text, tc.want) || strings.Join(asked, "|") != strings.Join(tc.asks, "|") {
			t.Errorf("policy %v: %q, asked %q; want %q, asked %q", tc.policy, text, asked, tc.want, tc.asks)
		}
	}
}
