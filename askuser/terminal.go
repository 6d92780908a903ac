package askuser

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// Terminal is the Port that shows questions on a terminal and reads the
// answer typed there: a number (several, comma-separated, for multi-select),
// or free text; an empty line skips the question.
type Terminal struct {
	out io.Writer

	mu    sync.Mutex // one question at a time
	lines chan string
	eof   chan struct{}

	closeOnce sync.Once
	done      chan struct{}
	file      *os.File // the tty OpenTTY opened, closed by Close
}

// NewTerminal makes a port reading answers from in and writing cards to out.
// Close ends its reader.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	t := &Terminal{out: out, lines: make(chan string), eof: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.eof)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case t.lines <- sc.Text():
			case <-t.done:
				return
			}
		}
	}()
	return t
}

// Close stops reading answers and closes the terminal OpenTTY opened. A
// reader blocked on some other input ends when that input does.
func (t *Terminal) Close() error {
	var err error
	t.closeOnce.Do(func() {
		close(t.done)
		if t.file != nil {
			err = t.file.Close()
		}
	})
	return err
}

// OpenTTY opens the controlling terminal, for a process whose stdin and
// stdout carry something else (an MCP pipe). Without one it returns an error
// wrapping ErrNoHuman.
func OpenTTY() (*Terminal, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, noHuman("no terminal to ask on (%v)", err)
	}
	t := NewTerminal(f, f)
	t.file = f
	return t, nil
}

// Ask prints the card and waits for a valid answer.
func (t *Terminal) Ask(ctx context.Context, q Question) (Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if lifetime.Ended(t.done) {
		return Answer{}, noHuman("the terminal was closed")
	}
	if lifetime.Ended(t.eof) {
		return Answer{}, noHuman("the terminal's input has ended")
	}
	fmt.Fprintf(t.out, "\n── question ──\n%s\n\n", cardText(q))
	for tries := 0; ; tries++ {
		fmt.Fprint(t.out, prompt(q))
		var line string
		select {
		case line = <-t.lines:
		case <-t.eof:
			return Answer{}, noHuman("the terminal's input has ended")
		case <-ctx.Done():
			fmt.Fprintln(t.out, "\n(no longer waiting for an answer)")
			return Answer{}, ctx.Err()
		}
		ans, problem := parseTyped(q, strings.TrimSpace(line))
		if problem == "" {
			return ans, nil
		}
		if tries == 2 {
			fmt.Fprintf(t.out, "%s; skipping the question\n", problem)
			return Answer{Outcome: Cancelled}, nil
		}
		fmt.Fprintln(t.out, problem)
	}
}

func prompt(q Question) string {
	var parts []string
	switch {
	case len(q.Options) > 0 && q.MultiSelect:
		parts = append(parts, "numbers separated by commas")
	case len(q.Options) > 0:
		parts = append(parts, "a number")
	}
	if q.AllowFreeText {
		parts = append(parts, "your own answer")
	}
	return "Type " + strings.Join(parts, " or ") + " (empty line skips): "
}

// parseTyped reads a typed line against q, returning a problem to show when
// it does not fit.
func parseTyped(q Question, line string) (Answer, string) {
	if line == "" {
		return Answer{Outcome: Declined}, ""
	}
	if len(q.Options) > 0 {
		var picks []string
		allNumbers := true
		for _, f := range strings.Split(line, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				allNumbers = false
				break
			}
			if n < 1 || n > len(q.Options) {
				return Answer{}, fmt.Sprintf("%d is not one of the options 1-%d", n, len(q.Options))
			}
			picks = append(picks, q.Options[n-1].Label)
		}
		if allNumbers {
			if len(picks) > 1 && !q.MultiSelect {
				return Answer{}, "pick one option"
			}
			return Answer{Outcome: Answered, Choices: picks}, ""
		}
		for _, o := range q.Options {
			if strings.EqualFold(o.Label, line) {
				return Answer{Outcome: Answered, Choices: []string{o.Label}}, ""
			}
		}
	}
	if !q.AllowFreeText {
		return Answer{}, "type the number of an option"
	}
	return Answer{Outcome: Answered, Text: line}, ""
}
