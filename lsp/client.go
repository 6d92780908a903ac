package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/brokered"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/rpc"
	"github.com/builtin-tools/builtin-tools/lsp/viewlock"
	"github.com/sourcegraph/jsonrpc2"
)

// server is one running language-server process for one root.
type server struct {
	spec    *langserver.Spec
	root    string // folder holding the marker (absolute)
	relRoot string // root relative to the supervisor root, for messages
	cfg     *Config

	bin      string // the program started
	proc     serverProc
	conn     *rpc.Conn
	exited   chan struct{} // closed once the process is reaped and its output drained
	started  time.Time
	encoding string
	name     string // serverInfo name and version, when sent
	version  string // serverInfo version, when sent

	relText      func(string) string // Supervisor.RelText, for what the server says
	loadTimedOut bool                // its initial loading outlasted StartTimeout
	// loaded: the log line that says it has loaded its workspace
	// (langserver.Spec.LoadedLog) came, or it has none.
	loaded bool

	specialOnce sync.Once
	special     string // what specialFilesNote found

	stateDir    string // private folder for caches and indexes, removed on exit
	initOptions any    // sent in initialize, as Prepare left them

	inflight atomic.Int32 // requests under way; the reaper skips busy servers

	// docs are the files it was sent, and its diagnostics (docsync.go).
	docs documents
	// view: calls share the server, a preview holds it alone.
	view viewlock.Lock

	mu       sync.Mutex
	exitErr  error // set when the process exited
	closing  bool  // shut down on purpose
	lastUsed time.Time
	pull     bool // textDocument/diagnostic is offered
	// applier takes a workspace/applyEdit while lsp_fix runs a command.
	applier func(*protocol.WorkspaceEdit) error
	// caps are the capabilities lsp_fix asks about.
	formatting, rangeFormatting, resolveActions bool
	// callHierarchy: it announced callHierarchyProvider; noOutgoing: it
	// answered callHierarchy/outgoingCalls with "method not found".
	callHierarchy, noOutgoing bool
	outgoingAnswer            string   // its error when noOutgoing
	actionKinds               []string // the codeActionKinds it announced, nil if none
	progress                  map[string]bool
	changed                   chan struct{} // closed and replaced on every diagnostics or progress event
}

type openDoc struct {
	path       string
	uri        string
	languageID string
	version    int
	text       string
	modTime    time.Time
	size       int64
	// syncSeq is the diagnostics sequence number when this version was
	// sent: an unversioned publish after it belongs to this version.
	syncSeq uint64
	// unsaved: a preview's version, not what is on disk (preview.go).
	unsaved bool
	// known are the diagnostics of this text, known without the server
	// (a preview's restored document has what it had before), valid while
	// the server's changes count is knownAt.
	known   []protocol.Diagnostic
	knownAt uint64
}

// sentText is a version of a document and its text.
type sentText struct {
	version int
	text    string
	changes uint64 // the server's count of document notifications after it
}

type diagState struct {
	version *int
	items   []protocol.Diagnostic
	seq     uint64
	at      time.Time
	// cleared: an empty publish for a later version than the last one,
	// which held findings. gopls sends one when it clears another
	// change's diagnostics and labels them with the version it has just
	// read, before it diagnoses that version (updateOrphanedFileDiagnostics:
	// the findings of the older version are left out as not of this one);
	// so for a server that publishes once it is no answer until the
	// server confirms it (langserver.Spec.Confirm) or the publishes settle.
	cleared bool
}

// testHooks lets tests act at exact points of a request (kill the server
// while a request is in flight). Nil in production.
type testHooks struct {
	beforeSend  func(s *server, method string)
	requestSent func(s *server, method string)
	previewSent func(s *server) // a preview's versions were sent
	shared      bool            // the servers still go to Config.Pool
}

// startServer launches l.Bin for spec in l.Root (as Prepare left the
// launch) and completes initialize (and the indexing wait for servers that
// index) before ctx ends. The state folder is the server's from here on:
// removed when it exits, or here when the start fails.
func startServer(ctx context.Context, spec *langserver.Spec, l *start, relRoot string, cfg *Config, hooks *testHooks, relText func(string) string) (*server, error) {
	s := &server{
		bin: l.Bin, relText: relText,
		spec: spec, root: l.Root, relRoot: relRoot, cfg: cfg,
		exited:   make(chan struct{}),
		started:  time.Now(),
		lastUsed: time.Now(),
		progress: map[string]bool{},
		loaded:   spec.LoadedLog == nil,
		changed:  make(chan struct{}),
		encoding: protocol.UTF16,
		stateDir: l.StateDir,
	}
	s.initOptions = l.InitializationOptions
	s.docs = documents{guard: l.Guard, send: s.notify,
		open: map[string]*openDoc{}, diags: map[string]*diagState{}, sent: map[string][]sentText{}}
	if err := ctx.Err(); err != nil {
		// Cancelled while preparing (the run closed): start nothing.
		os.RemoveAll(l.StateDir)
		return nil, err
	}
	if err := checkLaunch(l); err != nil {
		os.RemoveAll(l.StateDir)
		return nil, err
	}
	var rwc io.ReadWriteCloser
	if cfg.Broker != "" {
		// The user's broker holds the server, shared with other processes
		// (LSP-9); when it cannot, the server is this process's own.
		bp, err := startViaBroker(ctx, cfg, spec, l)
		if err == nil {
			s.proc, rwc = bp, bp.Conn()
		} else if l.joinOnly {
			os.RemoveAll(l.StateDir)
			return nil, err
		}
	}
	if s.proc == nil {
		cmd := exec.Command(l.Bin, l.Args...)
		cmd.Dir = l.Root
		cmd.Env = l.Env
		// proc gives it its own process group, so its end takes the helpers it
		// spawned (tsserver, node workers) along, and makes sure neither
		// outlives this process even if it is killed.
		p, err := proc.Start(cmd, proc.Options{PipeStdin: true, PipeStdout: true, Stderr: cfg.Stderr})
		if err != nil {
			os.RemoveAll(l.StateDir)
			return nil, fmt.Errorf("start %s: %w", l.Bin, err)
		}
		s.proc, rwc = p, rpc.Pipes(p.Stdout(), p.Stdin())
	}
	p := s.proc

	opt := rpc.Options{Exited: s.exited, Stall: cfg.RequestTimeout, Kill: s.kill}
	if hooks != nil && hooks.beforeSend != nil {
		opt.BeforeSend = func(method string) { hooks.beforeSend(s, method) }
	}
	if hooks != nil && hooks.requestSent != nil {
		opt.Sent = func(method string) { hooks.requestSent(s, method) }
	}
	s.conn = rpc.New(rwc, connHandler{s: s, sync: jsonrpc2.HandlerWithError(s.handle)}, opt)

	go func() {
		// Wait returns at Done, not Exited: the error quotes stderr,
		// complete by then.
		err := p.Wait()
		if err == nil {
			err = errors.New("exit status 0")
		}
		s.mu.Lock()
		s.exitErr = err
		s.mu.Unlock()
		close(s.exited)
		s.conn.Close()
		os.RemoveAll(l.StateDir)
	}()

	if err := s.initialize(ctx); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

func (s *server) initialize(ctx context.Context) error {
	rootURI := protocol.FileURI(s.root)
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]any{"name": "builtin-tools"},
		"rootUri":    rootURI,
		"rootPath":   s.root,
		"workspaceFolders": []map[string]any{
			{"uri": rootURI, "name": filepath.Base(s.root)},
		},
		"capabilities": protocol.ClientCapabilities(),
	}
	if s.initOptions != nil {
		params["initializationOptions"] = s.initOptions
	}
	var res protocol.InitializeResult
	// A start is bounded by StartTimeout, not by one request's time: a
	// server may take long to answer its first request on a cold machine.
	if err := s.callBounded(ctx, "initialize", params, &res, rpc.NewBound(s.cfg.StartTimeout)); err != nil {
		return err
	}
	switch enc := res.Capabilities.PositionEncoding; {
	case enc != "":
		s.encoding = enc
	case res.OffsetEncoding != "":
		s.encoding = res.OffsetEncoding
	}
	if res.ServerInfo != nil {
		s.name = res.ServerInfo.Name
		if res.ServerInfo.Version != "" {
			s.name += " " + res.ServerInfo.Version
			s.version = res.ServerInfo.Version
		}
	}
	s.mu.Lock()
	// A capability registered before (the broker replays them to a
	// joining client ahead of the answer) stands.
	s.pull = s.pull || protocol.ProviderOn(res.Capabilities.DiagnosticProvider)
	s.formatting = protocol.ProviderOn(res.Capabilities.DocumentFormattingProvider)
	s.callHierarchy = protocol.ProviderOn(res.Capabilities.CallHierarchyProvider)
	s.rangeFormatting = protocol.ProviderOn(res.Capabilities.DocumentRangeFormattingProvider)
	var cap struct {
		Kinds   []string `json:"codeActionKinds"`
		Resolve bool     `json:"resolveProvider"`
	}
	if json.Unmarshal(res.Capabilities.CodeActionProvider, &cap) == nil {
		s.resolveActions, s.actionKinds = cap.Resolve, cap.Kinds
	}
	s.mu.Unlock()
	if err := s.notify(ctx, "initialized", struct{}{}); err != nil {
		return err
	}
	if len(s.spec.Settings) > 0 {
		settings := s.spec.Settings[""]
		if settings == nil {
			settings = s.spec.Settings
		}
		if err := s.notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": settings}); err != nil {
			return err
		}
	}
	if s.spec.Indexes {
		s.waitIndexed(ctx)
	}
	return nil
}

func (s *server) readyLocked() bool {
	return s.loaded && (!s.spec.Indexes || len(s.progress) == 0)
}

// stillLoading says, after a wait for it, that the server has not loaded
// its workspace yet: "" when it has, else what a result notes (an answer
// may be incomplete).
func (s *server) stillLoading() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readyLocked() {
		return ""
	}
	return fmt.Sprintf("%s had not finished loading the workspace after %s (it has run %s), so the answer may be incomplete; ask again",
		s.spec.ID, s.cfg.StartTimeout, time.Since(s.started).Round(time.Second))
}

// waitIndexed waits until the server has loaded its workspace — no
// work-done progress active, for a server that reports its indexing so,
// and its LoadedLog line seen — bounded by ctx. Work a server announces
// only after the call started is not waited for; settle covers that case
// for a document just sent.
func (s *server) waitIndexed(ctx context.Context) {
	for {
		s.mu.Lock()
		ready := s.readyLocked()
		ch := s.changed
		s.mu.Unlock()
		if ready {
			return
		}
		select {
		case <-ch:
		case <-s.exited:
			return
		case <-ctx.Done():
			s.mu.Lock()
			s.loadTimedOut = true
			s.mu.Unlock()
			return
		}
	}
}

// handle answers the server's requests and records its notifications. It
// runs on the connection's read loop, so it never blocks.
func (s *server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif && s.cfg.Observe != nil {
		s.cfg.Observe(Notification{Server: s.spec.ID, Root: s.root, Method: req.Method, Params: params})
	}
	switch req.Method {
	case "$/builtintools/exited":
		if bp, ok := s.proc.(*brokered.Proc); ok {
			bp.NoteExit(params)
		}
		return nil, nil
	case "textDocument/publishDiagnostics":
		var p protocol.PublishDiagnosticsParams
		if json.Unmarshal(params, &p) == nil {
			at := time.Now()
			if _, ok := s.proc.(*brokered.Proc); ok && p.QuietMS > 0 {
				at = at.Add(-time.Duration(p.QuietMS) * time.Millisecond)
			}
			s.docs.mu.Lock()
			s.docs.diagSeq++
			prev := s.docs.diags[p.URI]
			cleared := len(p.Diagnostics) == 0 && prev != nil && len(prev.items) > 0 &&
				prev.version != nil && p.Version != nil && *p.Version > *prev.version
			s.docs.diags[p.URI] = &diagState{version: p.Version, items: p.Diagnostics, seq: s.docs.diagSeq, at: at, cleared: cleared}
			s.docs.mu.Unlock()
			s.signal(nil)
		}
		return nil, nil
	case "window/logMessage":
		if re := s.spec.LoadedLog; re != nil {
			var p struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(params, &p) == nil && re.MatchString(p.Message) {
				s.signal(func() { s.loaded = true })
			}
		}
		return nil, nil
	case "$/progress":
		var p protocol.ProgressParams
		if json.Unmarshal(params, &p) == nil {
			tok := string(p.Token)
			s.signal(func() {
				switch p.Value.Kind {
				case "begin":
					s.progress[tok] = true
				case "end":
					delete(s.progress, tok)
				}
			})
		}
		return nil, nil
	case "workspace/configuration":
		var p protocol.ConfigurationParams
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			out[i] = s.spec.Settings[it.Section]
		}
		return out, nil
	case "client/registerCapability":
		var p protocol.RegistrationParams
		if json.Unmarshal(params, &p) == nil {
			for _, r := range p.Registrations {
				if r.Method == "textDocument/diagnostic" {
					// Servers that register pull diagnostics stop
					// publishing; wake waiters so they switch to pulling.
					s.signal(func() { s.pull = true })
				}
			}
		}
		return nil, nil
	case "workspace/workspaceFolders":
		return []map[string]any{{"uri": protocol.FileURI(s.root), "name": filepath.Base(s.root)}}, nil
	case "window/workDoneProgress/create", "client/unregisterCapability", "window/showMessageRequest",
		"workspace/diagnostic/refresh", "workspace/semanticTokens/refresh", "workspace/inlayHint/refresh",
		"workspace/codeLens/refresh", "workspace/inlineValue/refresh", "window/showDocument":
		return nil, nil
	}
	if req.Notif {
		return nil, nil // logMessage, showMessage, telemetry: nothing to do
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "not supported by this client: " + req.Method}
}

// connHandler answers a workspace/applyEdit request on a goroutine of its
// own — taking the edit may wait for the operator's approval, and the
// connection must go on reading meanwhile — and everything else in order
// on the read loop (handle).
type connHandler struct {
	s    *server
	sync jsonrpc2.Handler
}

func (h connHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Method != "workspace/applyEdit" || req.Notif {
		h.sync.Handle(ctx, conn, req)
		return
	}
	go func() {
		_ = conn.Reply(ctx, req.ID, h.s.applyEdit(req))
	}()
}

// applyEdit takes a workspace/applyEdit: only while lsp_fix runs a command
// that asked for it; queries never change files.
func (s *server) applyEdit(req *jsonrpc2.Request) map[string]any {
	s.mu.Lock()
	apply := s.applier
	s.mu.Unlock()
	if apply == nil {
		return map[string]any{"applied": false, "failureReason": "this client applies edits only through lsp_rename and lsp_fix"}
	}
	var p struct {
		Edit protocol.WorkspaceEdit `json:"edit"`
	}
	if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil {
		return map[string]any{"applied": false, "failureReason": "the edit could not be read"}
	}
	if err := apply(&p.Edit); err != nil {
		return map[string]any{"applied": false, "failureReason": s.relText(err.Error())}
	}
	return map[string]any{"applied": true}
}

// signal makes change (nil for none) under s.mu and wakes whoever waits
// on s.changed.
func (s *server) signal(change func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if change != nil {
		change()
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// call sends one request, bounded by RequestTimeout, and maps failures to
// a *ServerError. A request given up on is cancelled at the server.
func (s *server) call(ctx context.Context, method string, params, result any) error {
	return s.callBounded(ctx, method, params, result, nil)
}

// callBounded is call with the time limit b (RequestTimeout when nil).
func (s *server) callBounded(ctx context.Context, method string, params, result any, b *rpc.Bound) error {
	if err := s.exitError(method); err != nil {
		return err
	}
	s.inflight.Add(1)
	s.touch()
	defer func() {
		s.touch()
		s.inflight.Add(-1)
	}()
	var cancel func()
	bound := s.cfg.RequestTimeout
	if b == nil {
		ctx, cancel = context.WithTimeout(ctx, bound)
	} else {
		ctx, cancel = b.Start(ctx)
		bound = b.Limit()
	}
	defer cancel()
	if err := s.conn.Request(ctx, method, params, result); err != nil {
		return s.failureAfter(ctx, method, err, bound)
	}
	return nil
}

// failure turns a transport error into what the caller should see.
func (s *server) failure(ctx context.Context, method string, err error) error {
	return s.failureAfter(ctx, method, err, s.cfg.RequestTimeout)
}

// failureAfter is failure for a request that was bounded by bound.
func (s *server) failureAfter(ctx context.Context, method string, err error, bound time.Duration) error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), rpc.ErrBoundExpired) {
		err = context.DeadlineExceeded
	}
	var rpcErr *jsonrpc2.Error
	switch {
	case errors.As(err, &rpcErr):
		return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerFailed, Detail: s.relText(rpcErr.Message), Code: rpcErr.Code}
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		if exitErr := s.exitError(method); exitErr != nil {
			return exitErr
		}
		detail := fmt.Sprintf("no answer within %s", bound)
		s.mu.Lock()
		loading := s.loadTimedOut
		s.mu.Unlock()
		if loading {
			detail += fmt.Sprintf(", after it had not finished loading the workspace within %s either", s.cfg.StartTimeout)
		}
		detail += s.specialFilesNote()
		return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerTimeout, Detail: s.relText(detail)}
	case errors.Is(err, context.Canceled):
		return err
	}
	// The connection closed: give the process a moment to be reaped so
	// the error can say how it ended.
	lifetime.Await(ctx, s.exited, 2*time.Second)
	if exitErr := s.exitError(method); exitErr != nil {
		return exitErr
	}
	return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerExited, Detail: err.Error()}
}

// specialFilesNote names named pipes, devices and sockets under the
// server's root that carry one of its extensions: the server's own tools
// (gopls's go list) open such a file and block on it, which is the usual
// reason a healthy server stops answering. Found once per server, with a
// bounded walk.
func (s *server) specialFilesNote() string {
	s.specialOnce.Do(func() {
		var found []string
		entries := 0
		filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if entries++; entries > 20000 || len(found) == 3 {
				return filepath.SkipAll
			}
			name := d.Name()
			if d.IsDir() {
				if p != s.root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
					return filepath.SkipDir
				}
				return nil
			}
			if t := d.Type(); t&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeSocket) != 0 {
				if _, ok := s.spec.Owns(name); ok {
					rel, _ := filepath.Rel(s.root, p)
					found = append(found, filepath.ToSlash(rel))
				}
			}
			return nil
		})
		if len(found) > 0 {
			s.special = fmt.Sprintf("; %s is not a regular file (a named pipe or a device), and the server's tools may be blocked opening it: remove it, then reload",
				strings.Join(found, ", "))
		}
	})
	return s.special
}

// exitError is non-nil once the process has exited.
func (s *server) exitError(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exitErr == nil {
		return nil
	}
	detail := s.exitErr.Error()
	if s.closing {
		detail = "it was stopped (reload, idle timeout or Close) while the call was under way"
	} else if why, more := explainTail(s.proc.Tail()); why != "" {
		detail += ": " + why
		if tail := s.proc.Tail().Last(600); more && !strings.Contains(tail, why) {
			detail += " (last output: " + clip(lastLines(tail, 3), 300) + ")"
		}
	}
	return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerExited, Detail: s.relText(detail)}
}

func (s *server) Alive() bool { return !lifetime.Ended(s.exited) }

// notify sends a notification (rpc.Conn.Send), so that a request sent
// afterwards follows it, and says why it was not written.
func (s *server) notify(ctx context.Context, method string, params any) error {
	if err := s.exitError(method); err != nil {
		return err
	}
	if strings.HasPrefix(method, "textDocument/did") && method != "textDocument/didSave" || method == "workspace/didChangeWatchedFiles" {
		s.docs.mu.Lock()
		s.docs.changes++
		s.docs.changedAt = time.Now()
		s.docs.mu.Unlock()
	}
	switch err := s.conn.Send(ctx, method, params); {
	case err == nil:
		return nil
	case errors.Is(err, ctx.Err()):
		return err
	case errors.Is(err, rpc.ErrExited):
		return s.notifyFailure(ctx, method, nil)
	default:
		return s.notifyFailure(ctx, method, err)
	}
}

// notifyFailure says why a notification was not sent: the server stopped
// reading and was killed, the write failed, or the server exited.
func (s *server) notifyFailure(ctx context.Context, method string, err error) error {
	switch {
	case s.conn.Stalled():
		return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerTimeout,
			Detail: "it stopped reading its input, so it was stopped"}
	case err != nil:
		return s.failure(ctx, method, err)
	}
	return s.exitError(method)
}

// Shutdown asks the server to exit (Shutdown, exit) and kills its process
// group if it has not exited by the time ctx ends.
func (s *server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	if s.Alive() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		// The writes do not watch sctx: a server that stopped reading would
		// block them, so the connection is closed when sctx ends.
		unblock := context.AfterFunc(sctx, func() { s.conn.Close() })
		if s.conn.Call(sctx, "shutdown", nil, nil) == nil {
			_ = s.conn.Notify(sctx, "exit", nil)
		}
		unblock()
		cancel()
		lifetime.Await(ctx, s.exited, 2*time.Second)
	}
	s.kill()
}

// kill ends the process group and waits (bounded) until the process is
// reaped.
func (s *server) kill() {
	s.proc.Kill()
	s.conn.Close()
}

func (s *server) PID() int { return s.proc.Pid() }

// Calls, Use, LastUsed and Previewing are what package pool asks of the
// server (pool.Member): the calls using it (a call's end takes its Use
// back), its last use, and whether a preview holds it alone.
func (s *server) Calls() int { return int(s.inflight.Load()) }
func (s *server) Use()       { s.inflight.Add(1) }
func (s *server) LastUsed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}
func (s *server) Previewing() bool { return s.view.Alone() }

func (s *server) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// lastLines returns the last n lines of s, joined by " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}

// explainTail returns the line of a program's stderr that says why it
// failed (see proc.ExplainingLine), and whether more output followed it.
func explainTail(t *proc.Tail) (string, bool) {
	line := proc.ExplainingLine(t.Head())
	return line, line != "" && t.Seen() > int64(len(strings.TrimSpace(line))+2)
}

// busyError says why a call waited in vain for another call's preview, or
// why a preview waited in vain for the calls under way.
func (s *server) busyError(method string, preview bool) error {
	detail := fmt.Sprintf("another call's diagnostics preview held it for over %s; ask again", s.cfg.viewBound())
	if preview {
		detail = fmt.Sprintf("other calls kept it busy for over %s, so the preview could not start; ask again", s.cfg.viewBound())
	}
	return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerTimeout, Detail: detail}
}

// idleFor is how long no call has used the server.
func (s *server) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastUsed)
}
