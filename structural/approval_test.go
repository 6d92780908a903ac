package structural_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Under write=ask a structural rewrite is asked about once, when resolve
// accepts it, with the staged diff on the card; staging and discarding
// are not asked about.
func TestRewriteAskedOnceAtAccept(t *testing.T) {
	var mu sync.Mutex
	var cards []string
	port := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		mu.Lock()
		cards = append(cards, q.Question+"\n"+q.Context)
		mu.Unlock()
		return askuser.Answer{Outcome: askuser.Answered, Choices: []string{"Allow"}}, nil
	})
	r := newRun(t, map[string]string{"a.go": "package a\n\nfunc f() { println(1) }\n"},
		builtintools.Options{Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	stage := func() string {
		out, isErr := call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "println($A)", "rewrite": "print($A)", "language": "go"})
		if isErr {
			t.Fatalf("ast_edit: %s", out)
		}
		return regexp.MustCompile(`edit_[0-9]+`).FindString(out)
	}
	id := stage()
	if out, isErr := call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "discard"}); isErr {
		t.Fatalf("discard: %s", out)
	}
	id = stage()
	if out, isErr := call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "accept"}); isErr {
		t.Fatalf("accept: %s", out)
	}
	if len(cards) != 1 || !strings.Contains(cards[0], "Allow resolve") || !strings.Contains(cards[0], "1 replacements of `println($A)` by `print($A)` in 1 files (a.go)") ||
		!strings.Contains(cards[0], "+func f() { print(1) }") {
		t.Fatalf("asked %d times: %q", len(cards), cards)
	}
}
