// Package asktest stands in for the human a tool asks (askuser), for tests
// of what is asked and what the answer does. It is apart from testenv,
// which packages below askuser import.
package asktest

import (
	"context"
	"slices"
	"sync"

	"github.com/builtin-tools/builtin-tools/askuser"
)

// Operator is an askuser.Port that answers every question with one choice
// and keeps each card it was shown: the question, a newline, the context.
type Operator struct {
	mu     sync.Mutex
	choice string
	cards  []string
}

// New is an Operator that answers with choice ("Allow", "Deny", …).
func New(choice string) *Operator { return &Operator{choice: choice} }

// Ask records the card and answers it.
func (o *Operator) Ask(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cards = append(o.cards, q.Question+"\n"+q.Context)
	return askuser.Answer{Outcome: askuser.Answered, Choices: []string{o.choice}}, nil
}

// Answer makes choice the answer to the questions from now on.
func (o *Operator) Answer(choice string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.choice = choice
}

// Cards are the cards shown so far, in order.
func (o *Operator) Cards() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.cards)
}
