// Package rpcline holds the lines of an MCP stdio connection, one JSON-RPC
// message each, as they are read before mcp-go sees them: the filter that
// answers what mcp-go would mishandle (a line over the size limit, not
// UTF-8, an id no client can match, a request before initialize, a call of
// a tool the run does not have) and passes the rest on, and the reading of
// a message's id or keys from bytes the JSON decoder refuses (cut short,
// nested too deep). It knows nothing of sessions or runs; package registry
// serves what it passes on.
package rpcline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// codeNotInitialized answers a request before initialize, as LSP's
// ServerNotInitialized; the filter's other codes are JSON-RPC's own.
const codeNotInitialized = -32002

// Filter passes lines of at most Max bytes on and answers the rest. It is
// one connection's, read by one goroutine.
type Filter struct {
	// Max is the longest line passed on, in bytes; it must be positive.
	Max int
	// Reply answers a line the filter drops with a JSON-RPC error (id nil
	// or null when the line's is not known).
	Reply func(id json.RawMessage, code int, msg string)
	// Unknown, when set, explains a tools/call of a tool the run does not
	// have ("" if it has it); such a call is answered -32602 with it, a
	// more useful text than mcp-go's "tool not found".
	Unknown func(name string) string

	initialized bool // an initialize request went through
}

// Run reads lines from in until it ends (nil), ctx ends (nil) or reading
// fails, and passes each line that passes the checks on, its own copy.
func (f *Filter) Run(ctx context.Context, in io.Reader, pass func(line []byte)) error {
	limit := f.Max
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		if ctx.Err() != nil {
			return nil
		}
		line = line[:0]
		size, over := 0, false
		var head []byte // the start of an over-long line, to find its id
		for {
			chunk, err := br.ReadSlice('\n')
			size += len(chunk)
			switch {
			case over:
			case size > limit:
				over = true
				head = append(head[:0], line[:min(len(line), 4<<10)]...)
				if len(head) < 4<<10 {
					head = append(head, chunk[:min(len(chunk), 4<<10-len(head))]...)
				}
				line = line[:0]
			default:
				line = append(line, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && size == 0 {
				if err == io.EOF {
					return nil
				}
				return err
			}
			break
		}
		if over {
			f.Reply(leadingID(head), mcp.INVALID_REQUEST, fmt.Sprintf(
				"the message is %d bytes, over this server's limit of %d bytes (--limit-frame), so it was not read; nothing was done. "+
					"Send less in one call: split a large write, or send a patch instead of a whole file", size, limit))
			continue
		}
		if !f.check(line) {
			continue
		}
		pass(bytes.Clone(line)) // pass may keep it: line is reused
	}
}

// check answers a frame mcp-go would mishandle and reports whether to pass
// it on. Malformed JSON is passed on: mcp-go answers it with -32700.
func (f *Filter) check(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false
	}
	if !utf8.Valid(trimmed) {
		at := 0
		for at < len(trimmed) {
			r, n := utf8.DecodeRune(trimmed[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		f.Reply(leadingID(trimmed), mcp.PARSE_ERROR, fmt.Sprintf(
			"the message is not UTF-8 (byte %d); JSON must be UTF-8, so a file whose name is not UTF-8 cannot be named: list its folder with read to see it", at))
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params struct {
			Name any            `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if trimmed[0] != '{' {
		return true
	}
	if err := json.Unmarshal(trimmed, &msg); err != nil {
		// mcp-go would answer with id null, which no client can match to
		// its request (N24: valid JSON nested too deep for the decoder).
		if id := topLevelID(trimmed); id != nil {
			f.Reply(id, mcp.PARSE_ERROR, fmt.Sprintf("the message could not be read (%v); nothing was done", err))
			return false
		}
		return true
	}
	if id := bytes.TrimSpace(msg.ID); len(id) > 0 {
		switch id[0] {
		case '{', '[', 't', 'f':
			f.Reply(nil, mcp.INVALID_REQUEST, "invalid request: the id must be a string, a number or null")
			return false
		}
	}
	if msg.Method == nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return true // a response or a notification
	}
	modern := false
	if v, ok := msg.Params.Meta[mcp.MetaKeyProtocolVersion].(string); ok {
		modern = mcp.IsModernProtocol(v)
	}
	switch *msg.Method {
	case "initialize":
		f.initialized = true
	case "ping", "server/discover":
		// The 2026-07-28 revision has no initialize: a client discovers,
		// then every request carries its protocol version.
	default:
		if !f.initialized && !modern {
			f.Reply(msg.ID, codeNotInitialized, fmt.Sprintf("%s before initialize: the session is not initialized; send initialize first", *msg.Method))
			return false
		}
	}
	if name, ok := msg.Params.Name.(string); ok && *msg.Method == "tools/call" && f.Unknown != nil {
		if why := f.Unknown(name); why != "" {
			f.Reply(msg.ID, mcp.INVALID_PARAMS, why)
			return false
		}
	}
	return true
}

// leadingID finds the id of a message from its first bytes, when the id
// comes before any params (as clients write it); otherwise null.
func leadingID(head []byte) json.RawMessage {
	i := bytes.Index(head, []byte(`"id"`))
	if i < 0 || bytes.Contains(head[:i], []byte(`"params"`)) {
		return nil
	}
	rest := bytes.TrimLeft(head[i+4:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	dec := json.NewDecoder(bytes.NewReader(rest))
	var v json.RawMessage
	if dec.Decode(&v) != nil || len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return v
	}
	return nil
}

// topLevelID finds the "id" member of the top-level object in a message
// the JSON decoder refused (nested too deep, or cut short); nil when there
// is none or it is not a string or a number.
func topLevelID(msg []byte) json.RawMessage {
	if v, ok := topLevelValue(msg, "id"); ok {
		return leadingValue(v)
	}
	return nil
}

// HasTopLevelKey reports whether the top-level object of msg has key, in a
// message the JSON decoder may refuse.
func HasTopLevelKey(msg []byte, key string) bool {
	_, ok := topLevelValue(msg, key)
	return ok
}

// topLevelValue finds the member key of the top-level object in msg by
// scanning strings and brackets without building anything, so it works on
// a message the JSON decoder refused: ok says the key is there, and the
// bytes are what follows its colon (blanks skipped), to the end of msg.
func topLevelValue(msg []byte, key string) ([]byte, bool) {
	want := `"` + key + `"`
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return nil, false
			}
		case '"':
			end := stringEnd(msg, i)
			if end < 0 {
				return nil, false
			}
			if depth == 1 && string(msg[i:end]) == want {
				rest := bytes.TrimLeft(msg[end:], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					return bytes.TrimLeft(rest[1:], " \t\r\n"), true
				}
			}
			i = end - 1
		}
	}
	return nil, false
}

// stringEnd returns the index just past the JSON string starting at
// msg[i], or -1 if it does not end.
func stringEnd(msg []byte, i int) int {
	for j := i + 1; j < len(msg); j++ {
		switch msg[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// leadingValue decodes the string or number at the start of b.
func leadingValue(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	end := 0
	switch c := b[0]; {
	case c == '"':
		end = stringEnd(b, 0)
	case c == '-' || c >= '0' && c <= '9':
		end = bytes.IndexAny(b, ", \t\r\n}")
	}
	if end <= 0 {
		return nil
	}
	v := b[:end]
	if !json.Valid(v) {
		return nil
	}
	return json.RawMessage(bytes.Clone(v))
}

// FirstRequestID reads the first line from in, at most 64 KiB of it, and
// returns its id if it is a request; nil otherwise. It reads ahead of the
// line: in is not read again after.
func FirstRequestID(in io.Reader) json.RawMessage {
	br := bufio.NewReaderSize(in, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull && len(line) == 0 {
		return nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &msg) != nil {
		if id := leadingID(line); id != nil && bytes.Contains(line, []byte(`"method"`)) {
			return id // a long initialize, cut short
		}
		return nil
	}
	id := bytes.TrimSpace(msg.ID)
	if msg.Method == "" || len(id) == 0 {
		return nil
	}
	switch id[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return id
	}
	return nil
}
