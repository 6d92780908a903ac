package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// The language server side goes through the repository's lsp package —
// the Supervisor, call hierarchy and definition the agent's `lsp` tool
// uses — so the truth is what an agent would get. Only the choice of
// server is the bench's: one row of langserver.Table with the program,
// arguments and environment of -server, -server-args and -server-env.

// callItem is the function the server resolved a target to.
type callItem struct {
	Name, Detail string
	Rel          string // relative to the root (absolute outside it)
	Line         int    // 1-based line of its name
}

// server is the lsp.Supervisor of one run, and what its servers reported.
type server struct {
	sup     *lsp.Supervisor
	started time.Time

	mu       sync.Mutex
	active   map[string]string // progress token -> title
	progress []string          // begin/end log, with times since start
	messages []string          // window/showMessage and errors of window/logMessage
}

// newServer makes the supervisor for c.root with one server row: the
// lsp table's row for the language, with the bench's program and
// environment. Nothing starts until the first request.
func newServer(c config, stderr io.Writer) (*server, error) {
	var row *langserver.Spec
	for _, sp := range langserver.Table() {
		if sp.ID == c.lang.spec {
			row = &sp
			break
		}
	}
	if row == nil {
		return nil, fmt.Errorf("package lsp has no server %q", c.lang.spec)
	}
	row.Command = append([]string{c.server}, c.args...)
	// The standard library holds no project file, and is one project.
	row.RootAtTop = c.lang.rootAtTop
	if env := c.env; len(env) > 0 {
		prepare := row.Prepare
		row.Prepare = func(l *langserver.Launch) error {
			if prepare != nil {
				if err := prepare(l); err != nil {
					return err
				}
			}
			if l.Env == nil {
				l.Env = os.Environ()
			}
			l.Env = append(l.Env, env...)
			return nil
		}
	}
	s := &server{active: map[string]string{}, started: time.Now()}
	s.sup = lsp.NewSupervisor(c.root, lsp.Config{
		Servers:        []langserver.Spec{*row},
		IdleTimeout:    -1,
		StartTimeout:   c.loadTimeout,
		RequestTimeout: c.queryTimeout,
		Observe:        s.observe,
		Stderr:         stderr,
	})
	if s.sup.Guard() == nil {
		return nil, fmt.Errorf("the root %s cannot be opened", c.root)
	}
	return s, nil
}

// observe notes progress reports and messages (on the server's read loop).
func (s *server) observe(n lsp.Notification) {
	switch n.Method {
	case "$/progress":
		var p protocol.ProgressParams
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		tok := n.Root + "\x00" + string(p.Token)
		s.mu.Lock()
		defer s.mu.Unlock()
		at := time.Since(s.started).Round(100 * time.Millisecond)
		switch p.Value.Kind {
		case "begin":
			s.active[tok] = p.Value.Title
			s.progress = append(s.progress, fmt.Sprintf("%s begin %q", at, p.Value.Title))
		case "end":
			s.progress = append(s.progress, fmt.Sprintf("%s end %q %s", at, s.active[tok], p.Value.Message))
			delete(s.active, tok)
		}
	case "window/showMessage", "window/logMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(n.Params, &p) == nil && (n.Method == "window/showMessage" || p.Type == 1) {
			s.mu.Lock()
			if len(s.messages) < 50 {
				s.messages = append(s.messages, strings.TrimSpace(p.Message))
			}
			s.mu.Unlock()
		}
	}
}

func (s *server) path(rel string) (pathguard.Path, error) {
	return s.sup.Guard().Path(rel)
}

// place is the protocol.Place of name at byte col of line lineNo (text): the
// occurrence that starts there, else the first one after col (a server's
// range may start before the name), else the first on the line.
func place(text string, lineNo, col int, name string) protocol.Place {
	if p, ok := protocol.PlaceAt(text, lineNo, col, name); ok {
		return p
	}
	for c := max(col, 0) + 1; c < len(text); c++ {
		if p, ok := protocol.PlaceAt(text, lineNo, c, name); ok {
			return p
		}
	}
	return protocol.Place{Line: lineNo, Symbol: name}
}

// incoming is every call site of the function at the place, through
// lsp's call hierarchy (prepareCallHierarchy, then incomingCalls).
func (s *server) incoming(ctx context.Context, rel string, p protocol.Place) (*answer.Calls, error) {
	at, err := s.path(rel)
	if err != nil {
		return nil, err
	}
	return s.sup.CallHierarchy(ctx, answer.OpIncomingCalls, at, p)
}

// definition is where the server's definition at the place leads.
func (s *server) definition(ctx context.Context, rel string, p protocol.Place) ([]answer.Location, error) {
	at, err := s.path(rel)
	if err != nil {
		return nil, err
	}
	res, err := s.sup.Definition(ctx, at, p)
	if err != nil {
		return nil, err
	}
	return res.Locations, nil
}

// item is the function a call hierarchy answer names.
func item(c *answer.Calls) *callItem {
	if c.Declared == nil {
		return nil
	}
	d := c.Declared
	return &callItem{Name: d.Name, Detail: d.Detail, Rel: d.Site.Path, Line: d.Site.Line}
}

// siteByte is a call site's byte column in its line's text: lsp counts
// characters (1-based) in files inside the root.
func siteByte(line string, l answer.Location) int {
	n := 1
	for i := range line {
		if n >= l.Column {
			return i
		}
		n++
	}
	return len(line)
}

func (s *server) snapshotProgress() (log []string, active []string, msgs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.active {
		active = append(active, t)
	}
	return append([]string(nil), s.progress...), active, append([]string(nil), s.messages...)
}

// stop shuts the servers down: shutdown and exit, then a kill of each
// one's process group (lsp.Supervisor.Close).
func (s *server) stop() { _ = s.sup.Close() }
