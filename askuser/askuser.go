// Package askuser is how a run asks its operator something (ASK-1..4): the
// ask_user tool, the approval prompts of the registry's gate (REG-7), and
// the ports a question travels through — the MCP client's elicitation, a
// terminal, or a function the harness supplies.
//
// A question is answered, skipped (declined or cancelled — a success that
// tells the agent to proceed under a stated assumption), or times out (an
// error with the same instruction). With no human attached, asking fails at
// once rather than blocking: the gate fails closed.
package askuser

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Option is one choice offered to the human.
type Option struct {
	Label       string `json:"label" jsonschema:"short text of the choice, as the human will see and pick it"`
	Description string `json:"description,omitempty" jsonschema:"what choosing it means"`
}

// Question is what is shown to the human.
type Question struct {
	Question      string
	Context       string
	Options       []Option
	AllowFreeText bool
	MultiSelect   bool
}

// Outcome is how the human responded.
type Outcome int

const (
	// Answered: the human chose options or typed an answer.
	Answered Outcome = iota
	// Declined: the human explicitly chose not to answer.
	Declined
	// Cancelled: the human dismissed the question without choosing.
	Cancelled
)

func (o Outcome) String() string {
	switch o {
	case Answered:
		return "answered"
	case Declined:
		return "declined"
	case Cancelled:
		return "cancelled"
	}
	return "unknown"
}

// Answer is the human's response.
type Answer struct {
	Outcome Outcome
	// Choices are the labels picked, in the order offered.
	Choices []string
	// Text is a free-text answer.
	Text string
}

// ErrNoHuman means nobody can answer through this port right now; callers
// fail at once instead of waiting.
var ErrNoHuman = errors.New("no human is attached to answer")

// ErrTimeout means nobody answered in time.
var ErrTimeout = errors.New("no answer in time")

// ErrInvalidAnswer means the human answered, but not as the question
// allowed (an option it did not offer, two on a single choice, free text
// where only its options were allowed): the answer is not used.
var ErrInvalidAnswer = errors.New("the answer is not one the question allowed")

// Error is why a question got no answer to use. Kind (ErrNoHuman,
// ErrTimeout, ErrInvalidAnswer) is what errors.Is matches and Detail what
// happened beyond it, so a caller that words its own sentence (ask_user's
// answer to the agent) takes the detail as data, never from the text. Err,
// when set, is the error behind it (registry/elicit's ErrNoAnswer), which errors.Is
// matches too. Msg, when set, is the whole sentence.
type Error struct {
	Kind   error
	Detail string
	Err    error
	Msg    string
}

// Error is Msg, or Kind's words and the detail: "no human is attached to
// answer: this run has no ask port".
func (e *Error) Error() string {
	switch {
	case e.Msg != "":
		return e.Msg
	case e.Detail == "":
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail
}

// Unwrap gives Kind and Err, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

func noHuman(format string, args ...any) error {
	return &Error{Kind: ErrNoHuman, Detail: fmt.Sprintf(format, args...)}
}

// detail is what err says beyond its kind: an Error's Detail, or, from a
// harness's port that wrapped a kind its own way, all of it.
func detail(err error) string {
	if e, ok := errors.AsType[*Error](err); ok && e.Msg == "" && e.Detail != "" {
		return e.Detail
	}
	return err.Error()
}

// Port carries a question to a human and brings back the answer. Ask blocks
// until answered, skipped, ctx ends, or the port finds nobody there (an
// error wrapping ErrNoHuman).
type Port interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Func is a Port supplied by a harness: it shows the card in its own UI.
type Func func(ctx context.Context, q Question) (Answer, error)

// Ask calls f.
func (f Func) Ask(ctx context.Context, q Question) (Answer, error) { return f(ctx, q) }

// DefaultTimeout bounds a question when the Asker sets none.
const DefaultTimeout = 10 * time.Minute

// Asker is the resource a run attaches as registry.AskPort: a port and how
// long a question may wait.
type Asker struct {
	Port    Port
	Timeout time.Duration
}

func (a *Asker) timeout() time.Duration {
	if a.Timeout <= 0 {
		return DefaultTimeout
	}
	return a.Timeout
}

// Ask checks q, asks through the port, and enforces the timeout and the
// shape of the answer.
func (a *Asker) Ask(ctx context.Context, q Question) (Answer, error) {
	if a == nil || a.Port == nil {
		return Answer{}, noHuman("this run has no ask port")
	}
	if err := q.check(); err != nil {
		return Answer{}, err
	}
	timeout := a.timeout()
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeout)
	defer cancel()
	ans, err := a.Port.Ask(tctx, q)
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(tctx), ErrTimeout) {
			return Answer{}, &Error{Kind: ErrTimeout, Detail: "nobody answered within " + timeout.String()}
		}
		return Answer{}, err
	}
	if ans.Outcome == Answered {
		if err := q.validate(&ans); err != nil {
			return Answer{}, &Error{Kind: ErrInvalidAnswer, Detail: err.Error()}
		}
	}
	return ans, nil
}

// check rejects questions no human could answer.
func (q Question) check() error {
	if q.Question == "" {
		return fmt.Errorf("question is empty: say what you need to know")
	}
	seen := map[string]bool{}
	for _, o := range q.Options {
		if o.Label == "" {
			return fmt.Errorf("every option needs a label")
		}
		if seen[o.Label] {
			return fmt.Errorf("option %q is offered twice; labels must differ", o.Label)
		}
		seen[o.Label] = true
	}
	if len(q.Options) == 0 && !q.AllowFreeText {
		return fmt.Errorf("give options to choose from, or set allow_free_text so the human can type an answer")
	}
	if q.MultiSelect && len(q.Options) == 0 {
		return fmt.Errorf("multi_select needs options")
	}
	return nil
}

func quoteLabels(opts []Option) string {
	labels := make([]string, len(opts))
	for i, o := range opts {
		labels[i] = o.Label
	}
	return quoteAll(labels)
}

// validate keeps only offered labels and rejects an empty answer.
func (q Question) validate(a *Answer) error {
	valid := map[string]bool{}
	for _, o := range q.Options {
		valid[o.Label] = true
	}
	var kept []string
	for _, c := range a.Choices {
		if !valid[c] {
			return fmt.Errorf("it picked %q, which was not offered (the options were %s); to take it, ask again with it among the options or with allow_free_text", c, quoteLabels(q.Options))
		}
		kept = append(kept, c)
	}
	if !q.MultiSelect && len(kept) > 1 {
		return fmt.Errorf("it picked %d options (%s) on a question that allows one; to take several, ask again with multi_select", len(kept), quoteAll(kept))
	}
	if a.Text != "" && !q.AllowFreeText && len(q.Options) > 0 {
		return fmt.Errorf("it was free text (%q) on a question that allows only its options; to take it, ask again with allow_free_text", a.Text)
	}
	if len(kept) == 0 && a.Text == "" {
		// Accepted with nothing in it: as good as skipped.
		a.Outcome = Declined
	}
	a.Choices = kept
	return nil
}
