// Package agentstream reads what a vibe worker prints on stdout: the event
// stream of an agent CLI (Claude Code's stream-json, Codex's exec --json),
// plain JSON records, or text. It gives the final result, the usage so far
// (tokens, and Claude's cost), the session a later run resumes (and the
// command line that resumes it), the errors the agent reported, and a
// readable line for what the agent said and did. It knows nothing of
// processes, rosters or tools.
package agentstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// A worker's stdout may be the event stream of an agent CLI: Claude Code's
// `claude -p --output-format stream-json --verbose` (records of type
// system, assistant, user and result, each with a session_id) or Codex's
// `codex exec --json` (thread.started, turn.*, item.*, error). The stream
// gives the final result, the usage so far (tokens, and Claude's cost),
// the session to resume, and the errors the agent reported; what the
// agent says and does along the way is written as readable output lines.
//
// What a worker prints may come from anywhere, a file of the checkout
// included, so the kind of stream is decided once, by its first non-blank
// line, and never changes (R6): an agent's stream only when the command
// line names that CLI and the first line is the record its stream opens
// with (Claude's system record, Codex's thread.started); plain JSON records
// (a "result" string, usage, model) only when the first line is one; text
// otherwise, where no line is read as a record and stdout is the result.
// A record of another kind is output; cost and session come only from an
// agent's stream.

// Streams says which agent CLIs a worker's command line names: a word of
// it (not an option) whose file name holds "claude" or "codex", such as
// claude, /usr/local/bin/codex, @openai/codex or run-claude.sh. Only those
// streams are read as an agent's.
type Streams struct{ claude, codex bool }

// StreamsOf is the agent streams command line allows.
func StreamsOf(line string) Streams {
	var s Streams
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "-") {
			continue
		}
		base := strings.ToLower(w[strings.LastIndexByte(w, '/')+1:])
		s.claude = s.claude || strings.Contains(base, BackendClaude)
		s.codex = s.codex || strings.Contains(base, BackendCodex)
	}
	return s
}

// allows says whether a stream of backend b may be read.
func (s Streams) allows(b string) bool {
	return b == BackendClaude && s.claude || b == BackendCodex && s.codex
}

// streamKind is what a worker's stdout was found to be.
type streamKind int

const (
	streamUndecided streamKind = iota
	streamText                 // no line is a record
	streamRecords              // plain JSON records
	streamAgent                // events.kind's
)

// Session is an agent CLI's session, which a later run can resume.
type Session struct {
	Backend string `json:"backend" jsonschema:"claude or codex"`
	ID      string `json:"id"`
}

// Backends whose sessions a run resumes.
const (
	BackendClaude = "claude"
	BackendCodex  = "codex"
)

// events reads one run's records.
type events struct {
	agents  Streams // the agent streams the command line allows
	stream  streamKind
	kind    string // BackendClaude or BackendCodex in an agent's stream
	session string
	result  *string
	final   bool
	errs    []string
	usage   Usage
	have    bool // usage was reported
	// claudeMsgs is the usage of each assistant message by id: Claude
	// repeats a message's usage on every record of its content blocks.
	claudeMsgs map[string]Usage
	claudeSeq  []string
	// codexTurns is the usage of the turns that completed.
	codexTurns Usage
	lastAgent  *string
	// onUsage, if set, is told the usage so far whenever it changes.
	onUsage func(Usage)
}

// record reads a line that may be a record. It says whether it was one
// (else the line is output) and returns what of it is output: a readable
// line for what the agent said or did. The first non-blank line decides
// the stream's kind.
func (e *events) record(line []byte) (text string, ok bool) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || e.stream == streamText {
		return "", false
	}
	var m map[string]json.RawMessage
	if t[0] != '{' || json.Unmarshal(t, &m) != nil {
		e.textLine()
		return "", false
	}
	var typ, sid string
	json.Unmarshal(m["type"], &typ)
	json.Unmarshal(m["session_id"], &sid)
	claudes, codexes := sid != "" && claudeTypes[typ], codexType(typ)
	if e.stream == streamUndecided {
		switch {
		case e.agents.claude && claudes && typ == "system":
			e.stream, e.kind = streamAgent, BackendClaude
		case e.agents.codex && typ == "thread.started":
			e.stream, e.kind = streamAgent, BackendCodex
		case !claudes && !codexes && e.plain(m):
			e.stream = streamRecords
			return "", true
		default:
			e.stream = streamText
			return "", false
		}
	}
	switch {
	case e.stream == streamAgent && e.kind == BackendClaude && claudes:
		e.session = sid
		return e.claude(typ, m, t), true
	case e.stream == streamAgent && e.kind == BackendCodex && codexes:
		return e.codex(typ, m, t), true
	case e.stream == streamRecords && !claudes && !codexes:
		return "", e.plain(m)
	}
	return "", false
}

// textLine notes a line of output that is not a record: as the first, it
// makes the stream text.
func (e *events) textLine() {
	if e.stream == streamUndecided {
		e.stream = streamText
	}
}

var claudeTypes = map[string]bool{"system": true, "assistant": true, "user": true, "result": true, "stream_event": true}

func codexType(t string) bool {
	return t == "thread.started" || t == "error" || strings.HasPrefix(t, "turn.") || strings.HasPrefix(t, "item.")
}

// plain reads a record of no agent CLI: "result", "usage", "model". Each
// record's usage replaces the last. A cost is not read: only an agent's
// stream, which the command line names, says what a run cost.
func (e *events) plain(m map[string]json.RawMessage) bool {
	var res *string
	if raw, ok := m["result"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			res = &s
		}
	}
	u := e.usage
	have := false
	var pu struct {
		In  *int `json:"input_tokens"`
		Out *int `json:"output_tokens"`
	}
	if raw, ok := m["usage"]; ok && json.Unmarshal(raw, &pu) == nil {
		have = true
		if pu.In != nil {
			u.InputTokens = *pu.In
		}
		if pu.Out != nil {
			u.OutputTokens = *pu.Out
		}
	}
	if raw, ok := m["model"]; ok && json.Unmarshal(raw, &u.Model) == nil {
		have = true
	}
	if res == nil && !have {
		return false
	}
	if res != nil {
		e.result, e.final = res, true
	}
	if have {
		e.setUsage(u)
	}
	return true
}

func (e *events) setUsage(u Usage) {
	if e.have && u == e.usage {
		return
	}
	e.usage, e.have = u, true
	if e.onUsage != nil {
		e.onUsage(u)
	}
}

// claudeUsage is the usage object of Claude's records.
type claudeUsage struct {
	Input         int `json:"input_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
	Output        int `json:"output_tokens"`
}

// tokens counts every input token the model read, cached or not.
func (c claudeUsage) tokens() Usage {
	return Usage{InputTokens: c.Input + c.CacheCreation + c.CacheRead, CachedInputTokens: c.CacheRead, OutputTokens: c.Output}
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

func (e *events) claude(typ string, m map[string]json.RawMessage, raw []byte) string {
	switch typ {
	case "system":
		var model string
		if json.Unmarshal(m["model"], &model) == nil && model != "" {
			u := e.usage
			u.Model = model
			e.setUsage(u)
		}
	case "assistant", "user":
		var msg struct {
			ID      string          `json:"id"`
			Model   string          `json:"model"`
			Content json.RawMessage `json:"content"`
			Usage   *claudeUsage    `json:"usage"`
		}
		if json.Unmarshal(m["message"], &msg) != nil {
			return ""
		}
		var blocks []claudeBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			var s string
			if json.Unmarshal(msg.Content, &s) == nil && typ == "assistant" {
				blocks = []claudeBlock{{Type: "text", Text: s}}
			}
		}
		if typ == "assistant" && msg.Usage != nil && msg.ID != "" {
			if e.claudeMsgs == nil {
				e.claudeMsgs = map[string]Usage{}
			}
			if _, seen := e.claudeMsgs[msg.ID]; !seen {
				e.claudeSeq = append(e.claudeSeq, msg.ID)
			}
			e.claudeMsgs[msg.ID] = msg.Usage.tokens()
			u := Usage{Model: e.usage.Model, CostUSD: e.usage.CostUSD}
			if msg.Model != "" {
				u.Model = msg.Model
			}
			for _, id := range e.claudeSeq {
				x := e.claudeMsgs[id]
				u.InputTokens += x.InputTokens
				u.CachedInputTokens += x.CachedInputTokens
				u.OutputTokens += x.OutputTokens
			}
			e.setUsage(u)
		}
		var out []string
		for _, b := range blocks {
			switch {
			case typ == "assistant" && b.Type == "text" && strings.TrimSpace(b.Text) != "":
				out = append(out, strings.TrimSpace(b.Text))
			case typ == "assistant" && b.Type == "tool_use":
				out = append(out, "→ "+b.Name+" "+textcut.Ellipsis(oneLine(string(b.Input)), 200))
			case typ == "user" && b.Type == "tool_result" && b.IsError:
				out = append(out, "← tool error: "+textcut.Ellipsis(oneLine(contentText(b.Content)), 200))
			}
		}
		return strings.Join(out, "\n")
	case "result":
		var r struct {
			Subtype string          `json:"subtype"`
			IsError bool            `json:"is_error"`
			Result  *string         `json:"result"`
			Cost    *float64        `json:"total_cost_usd"`
			Usage   *claudeUsage    `json:"usage"`
			Errors  json.RawMessage `json:"errors"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return ""
		}
		u := e.usage
		if r.Usage != nil {
			t := r.Usage.tokens()
			u.InputTokens, u.CachedInputTokens, u.OutputTokens = t.InputTokens, t.CachedInputTokens, t.OutputTokens
		}
		if r.Cost != nil {
			u.CostUSD = *r.Cost
		}
		if r.Usage != nil || r.Cost != nil {
			e.setUsage(u)
		}
		if r.IsError || (r.Subtype != "" && r.Subtype != "success") {
			why := "claude ended with " + r.Subtype
			if r.Subtype == "" {
				why = "claude reported an error"
			}
			if r.Result != nil && *r.Result != "" {
				why += ": " + textcut.Ellipsis(oneLine(*r.Result), 500)
			} else if len(r.Errors) > 0 && string(r.Errors) != "null" && string(r.Errors) != "[]" {
				why += ": " + textcut.Ellipsis(oneLine(contentText(r.Errors)), 500)
			}
			e.errs = append(e.errs, why)
			if r.Result != nil {
				e.result = r.Result
			}
			return ""
		}
		if r.Result != nil {
			e.result, e.final = r.Result, true
		}
	}
	return ""
}

// codexUsage is turn.completed's usage.
type codexUsage struct {
	Input  int `json:"input_tokens"`
	Cached int `json:"cached_input_tokens"`
	Output int `json:"output_tokens"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Message  string `json:"message"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
	Query    string `json:"query"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

func (e *events) codex(typ string, m map[string]json.RawMessage, raw []byte) string {
	switch typ {
	case "thread.started":
		var id string
		if json.Unmarshal(m["thread_id"], &id) == nil && id != "" {
			e.session = id
		}
	case "turn.started":
		e.final = false
	case "turn.completed":
		var tc struct {
			Usage *codexUsage `json:"usage"`
		}
		json.Unmarshal(raw, &tc)
		if tc.Usage != nil {
			e.codexTurns.InputTokens += tc.Usage.Input
			e.codexTurns.CachedInputTokens += tc.Usage.Cached
			e.codexTurns.OutputTokens += tc.Usage.Output
			u := e.usage
			u.InputTokens, u.CachedInputTokens, u.OutputTokens = e.codexTurns.InputTokens, e.codexTurns.CachedInputTokens, e.codexTurns.OutputTokens
			e.setUsage(u)
		}
		if e.lastAgent != nil {
			e.result, e.final = e.lastAgent, true
		}
	case "turn.failed":
		var tf struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(raw, &tf)
		msg := tf.Error.Message
		if msg == "" {
			msg = "no message"
		}
		e.errs = append(e.errs, "codex's turn failed: "+textcut.Ellipsis(oneLine(msg), 500))
		e.final = false
	case "error":
		// A stream error; codex may go on (a reconnect), so it is said
		// as output, and a failed turn is the failure.
		var msg string
		json.Unmarshal(m["message"], &msg)
		return "codex error: " + textcut.Ellipsis(oneLine(msg), 500)
	case "item.completed", "item.started":
		var it struct {
			Item codexItem `json:"item"`
		}
		if json.Unmarshal(m["item"], &it.Item) != nil {
			return ""
		}
		i := it.Item
		if typ == "item.started" {
			if i.Type == "command_execution" {
				return "$ " + textcut.Ellipsis(oneLine(i.Command), 200)
			}
			return ""
		}
		switch i.Type {
		case "agent_message":
			t := i.Text
			e.lastAgent = &t
			return strings.TrimSpace(t)
		case "command_execution":
			if i.ExitCode != nil {
				return fmt.Sprintf("$ %s (exit %d)", textcut.Ellipsis(oneLine(i.Command), 200), *i.ExitCode)
			}
			return "$ " + textcut.Ellipsis(oneLine(i.Command), 200) + " (" + i.Status + ")"
		case "file_change":
			var paths []string
			for _, c := range i.Changes {
				paths = append(paths, c.Kind+" "+c.Path)
			}
			return "changed: " + textcut.Ellipsis(strings.Join(paths, ", "), 300)
		case "mcp_tool_call":
			return "→ " + i.Server + "." + i.Tool + " (" + i.Status + ")"
		case "web_search":
			return "web search: " + textcut.Ellipsis(oneLine(i.Query), 200)
		case "error":
			return "codex error: " + textcut.Ellipsis(oneLine(i.Message), 500)
		}
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// contentText is a tool result's content: a string, or the text of its
// blocks, or the JSON as it is.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	return string(raw)
}

// sessionOf is the session the stream reported, if any.
func (e *events) sessionOf() *Session {
	if e.stream != streamAgent || e.session == "" {
		return nil
	}
	return &Session{Backend: e.kind, ID: e.session}
}
