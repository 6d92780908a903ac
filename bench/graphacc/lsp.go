package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The language server side: just enough LSP over stdio to ask for call
// hierarchies and definitions.

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type location struct {
	URI   string   `json:"uri"`
	Range lspRange `json:"range"`
}

// callItem is a CallHierarchyItem: the fields we read, and the raw JSON to
// hand back to callHierarchy/incomingCalls unchanged.
type callItem struct {
	Name           string   `json:"name"`
	Detail         string   `json:"detail"`
	URI            string   `json:"uri"`
	Range          lspRange `json:"range"`
	SelectionRange lspRange `json:"selectionRange"`
	raw            json.RawMessage
}

type incomingCall struct {
	From       callItem   `json:"from"`
	FromRanges []lspRange `json:"fromRanges"`
}

// stdio joins a child's pipes into one connection.
type stdio struct {
	io.ReadCloser
	w io.WriteCloser
}

func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s stdio) Close() error {
	err1 := s.w.Close()
	err2 := s.ReadCloser.Close()
	return errors.Join(err1, err2)
}

// server is one running language server.
type server struct {
	cmd     *exec.Cmd
	conn    *jsonrpc2.Conn
	pgid    int
	exited  chan struct{}
	folders []string
	langID  string

	mu       sync.Mutex
	active   map[string]string // progress token -> title
	progress []string          // begin/end log, with times since start
	messages []string          // window/showMessage and errors of window/logMessage
	started  time.Time
	opened   map[string]bool
	killOnce sync.Once
}

// startServer runs bin with args in its own process group (so it and any
// children it starts can be killed together) and connects to its stdio.
func startServer(bin string, args, env []string, dir, langID string, stderr io.Writer) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, pgid: cmd.Process.Pid, exited: make(chan struct{}), langID: langID,
		active: map[string]string{}, started: time.Now(), opened: map[string]bool{}}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	stream := jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{})
	s.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(s.handle))
	return s, nil
}

// handle answers the server's requests and notes its progress reports.
func (s *server) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i := range out {
			out[i] = map[string]any{}
		}
		return out, nil
	case "workspace/workspaceFolders":
		var out []map[string]string
		for _, f := range s.folders {
			out = append(out, map[string]string{"uri": fileURI(f), "name": filepath.Base(f)})
		}
		return out, nil
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) == nil {
			tok := string(p.Token)
			s.mu.Lock()
			at := time.Since(s.started).Round(100 * time.Millisecond)
			switch p.Value.Kind {
			case "begin":
				s.active[tok] = p.Value.Title
				s.progress = append(s.progress, fmt.Sprintf("%s begin %q", at, p.Value.Title))
			case "end":
				s.progress = append(s.progress, fmt.Sprintf("%s end %q %s", at, s.active[tok], p.Value.Message))
				delete(s.active, tok)
			}
			s.mu.Unlock()
		}
		return nil, nil
	case "window/showMessage", "window/logMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil && (req.Method == "window/showMessage" || p.Type == 1) {
			s.mu.Lock()
			if len(s.messages) < 50 {
				s.messages = append(s.messages, strings.TrimSpace(p.Message))
			}
			s.mu.Unlock()
		}
		return nil, nil
	}
	// window/workDoneProgress/create, client/registerCapability,
	// window/showMessageRequest, diagnostics: nothing to say.
	return nil, nil
}

func (s *server) call(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return s.conn.Call(ctx, method, params, result)
}

func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

func uriPath(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "file" {
		return u
	}
	return filepath.FromSlash(pu.Path)
}

// initialize sends initialize and initialized for root and its folders.
func (s *server) initialize(ctx context.Context, root string, folders []string) error {
	s.folders = folders
	var wf []map[string]string
	for _, f := range folders {
		wf = append(wf, map[string]string{"uri": fileURI(f), "name": filepath.Base(f)})
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          fileURI(root),
		"rootPath":         root,
		"workspaceFolders": wf,
		"clientInfo":       map[string]string{"name": "graphacc"},
		"capabilities": map[string]any{
			"workspace": map[string]any{
				"workspaceFolders": true,
				"configuration":    true,
			},
			"textDocument": map[string]any{
				"callHierarchy":      map[string]any{"dynamicRegistration": false},
				"definition":         map[string]any{"dynamicRegistration": false, "linkSupport": false},
				"synchronization":    map[string]any{"dynamicRegistration": false},
				"publishDiagnostics": map[string]any{},
			},
			"window": map[string]any{"workDoneProgress": true},
			"general": map[string]any{
				"positionEncodings": []string{"utf-16"},
			},
		},
	}
	var res json.RawMessage
	if err := s.call(ctx, 5*time.Minute, "initialize", params, &res); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return s.conn.Notify(ctx, "initialized", map[string]any{})
}

// open sends didOpen for a file once (servers that only answer about
// open documents need it).
func (s *server) open(ctx context.Context, abs string) error {
	s.mu.Lock()
	done := s.opened[abs]
	s.opened[abs] = true
	s.mu.Unlock()
	if done {
		return nil
	}
	text, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	return s.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": fileURI(abs), "languageId": s.langID, "version": 1, "text": string(text)},
	})
}

func (s *server) prepare(ctx context.Context, timeout time.Duration, abs string, pos position) ([]callItem, error) {
	var raws []json.RawMessage
	err := s.call(ctx, timeout, "textDocument/prepareCallHierarchy", map[string]any{
		"textDocument": map[string]string{"uri": fileURI(abs)},
		"position":     pos,
	}, &raws)
	if err != nil {
		return nil, err
	}
	var items []callItem
	for _, r := range raws {
		var it callItem
		if err := json.Unmarshal(r, &it); err != nil {
			return nil, err
		}
		it.raw = r
		items = append(items, it)
	}
	return items, nil
}

func (s *server) incoming(ctx context.Context, timeout time.Duration, it callItem) ([]incomingCall, error) {
	var out []incomingCall
	err := s.call(ctx, timeout, "callHierarchy/incomingCalls", map[string]any{"item": it.raw}, &out)
	return out, err
}

// definition asks where the identifier at pos leads. It accepts a
// Location, a list of them, or LocationLinks.
func (s *server) definition(ctx context.Context, timeout time.Duration, abs string, pos position) ([]location, error) {
	var raw json.RawMessage
	err := s.call(ctx, timeout, "textDocument/definition", map[string]any{
		"textDocument": map[string]string{"uri": fileURI(abs)},
		"position":     pos,
	}, &raw)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	type link struct {
		TargetURI            string   `json:"targetUri"`
		TargetSelectionRange lspRange `json:"targetSelectionRange"`
	}
	var one location
	if raw[0] == '{' {
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		return []location{one}, nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, err
	}
	var out []location
	for _, m := range many {
		var l location
		var k link
		_ = json.Unmarshal(m, &l)
		if l.URI == "" && json.Unmarshal(m, &k) == nil && k.TargetURI != "" {
			l = location{URI: k.TargetURI, Range: k.TargetSelectionRange}
		}
		if l.URI != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *server) snapshotProgress() (log []string, active []string, msgs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.active {
		active = append(active, t)
	}
	return append([]string(nil), s.progress...), active, append([]string(nil), s.messages...)
}

// stop asks the server to shut down and exit, then kills its process
// group whatever it did, so nothing it started is left behind.
func (s *server) stop() {
	s.killOnce.Do(func() {
		// Children that leave the group (gopls's telemetry sidecar starts
		// a session of its own) are killed by their ids afterwards.
		kids := descendants(s.cmd.Process.Pid)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = s.conn.Call(ctx, "shutdown", nil, nil)
			_ = s.conn.Notify(ctx, "exit", nil)
		}()
		select {
		case <-done:
		case <-time.After(12 * time.Second):
		}
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = s.conn.Close()
	})
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// kill ends the process group, and the children that left it, at once
// (on a signal).
func (s *server) kill() {
	kids := descendants(s.cmd.Process.Pid)
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	for _, pid := range kids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
