package agentstream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Usage is what a run cost, when the backend says.
type Usage struct {
	// InputTokens counts every input token the model read, cached ones
	// too (CachedInputTokens of them).
	InputTokens       int     `json:"input_tokens,omitempty" jsonschema:"every input token the model read, cached ones included"`
	CachedInputTokens int     `json:"cached_input_tokens,omitempty"`
	OutputTokens      int     `json:"output_tokens,omitempty"`
	CostUSD           float64 `json:"cost_usd,omitempty" jsonschema:"what the backend says it cost (claude reports it with its result; codex does not)"`
	Model             string  `json:"model,omitempty"`
}

// Tokens is every token in and out.
func (u Usage) Tokens() int { return u.InputTokens + u.OutputTokens }

// sessionSafe is what a session id may be to go in a command line.
var sessionSafe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// ResumeLine is line resuming session s: `claude ... --resume ID`, `codex
// exec ... resume ID` (before a last "-", the prompt read from stdin).
func ResumeLine(line string, s Session) (string, bool) {
	if !sessionSafe.MatchString(s.ID) || !StreamsOf(line).allows(s.Backend) {
		return "", false
	}
	line = strings.TrimSpace(line)
	switch s.Backend {
	case BackendClaude:
		return line + " --resume " + s.ID, true
	case BackendCodex:
		if !slices.Contains(strings.Fields(line), "exec") {
			return "", false
		}
		if strings.HasSuffix(line, " -") {
			return strings.TrimSuffix(line, "-") + "resume " + s.ID + " -", true
		}
		return line + " resume " + s.ID, true
	}
	return "", false
}

// recordMax bounds a stdout line read as a JSON record; a longer line is
// output, kept as text.
const recordMax = 16 << 20

// Stdout is what a worker's stdout gave.
type Stdout struct {
	Final   *string // the final result, if the stream gave one
	Usage   *Usage
	Text    bool // some output that is not a record, other than blanks
	Notes   []string
	Session *Session
	Errors  []string
	Agent   bool // the stream was an agent CLI's: only its result record is a result
}

// Read reads a worker's stdout to its end: lines that are JSON records of
// the stream's kind (events.go; agents are those its command line names)
// give the result and usage, every other byte goes to out as it arrives.
// No line is ever held whole beyond recordMax: a longer one is output, and
// reading goes on after it.
func Read(r io.Reader, out io.Writer, agents Streams, activity func(), onUsage func(Usage)) Stdout {
	var res Stdout
	ev := &events{agents: agents, onUsage: onUsage}
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		pending  []byte // a line that may be a record
		text     bool   // the line being read is output
		overlong int
	)
	emit := func(b []byte) {
		if len(bytes.TrimSpace(b)) > 0 {
			res.Text = true
		}
		out.Write(b)
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && activity != nil {
			activity()
		}
		complete := err == nil
		if len(chunk) > 0 {
			if !text && len(pending) == 0 {
				if t := bytes.TrimLeft(chunk, " \t\r"); ev.stream == streamText || len(t) > 0 && t[0] != '{' && t[0] != '\n' {
					text = true
					ev.textLine()
				}
			}
			if text {
				emit(chunk)
			} else {
				pending = append(pending, chunk...)
				if len(pending) > recordMax {
					overlong++
					ev.textLine()
					emit(pending)
					pending, text = nil, true
				}
			}
		}
		if complete || (err != nil && err != bufio.ErrBufferFull) {
			if len(pending) > 0 {
				if said, ok := ev.record(pending); !ok {
					emit(pending)
				} else if said != "" {
					emit([]byte(said + "\n"))
				}
			}
			if cap(pending) > 1<<20 {
				pending = nil // a long record's buffer is not kept
			}
			pending, text = pending[:0], false
		}
		if err != nil && err != bufio.ErrBufferFull {
			break
		}
	}
	if ev.final {
		res.Final = ev.result
	}
	if ev.have {
		u := ev.usage
		res.Usage = &u
	}
	res.Session, res.Errors, res.Agent = ev.sessionOf(), ev.errs, ev.stream == streamAgent
	if len(ev.errs) > 0 && ev.result != nil && *ev.result != "" {
		res.Final = nil
		emit([]byte(*ev.result + "\n"))
	}
	if overlong > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d output lines that began like a JSON record were over %d MiB; they are kept as text, not read as records", overlong, recordMax>>20))
	}
	return res
}
