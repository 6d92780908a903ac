package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker/docsync"
)

// backend is one server and its clients.
type backend struct {
	b     *broker
	key   string
	hello Hello // the first, which started it
	proc  *proc.Process
	idle  time.Duration
	dir   string // the state folder

	wmu sync.Mutex // one write to the server at a time
	w   *framing.Writer

	mu          sync.Mutex
	cond        *sync.Cond
	clients     []*bclient // oldest first
	nextID      int64
	pending     map[string]pendingCall // by the id sent to the server
	toClient    map[string]pendingCall // server→client requests, by the id sent to the client
	initResult  json.RawMessage
	initWaiting bool
	initID      string // the id the first initialize was sent to the server with
	initialized bool
	configured  bool // a client's didChangeConfiguration went through (the settings are the hello's, the same for all)
	docs        *docsync.Table[*bclient]
	// progress holds each work-done progress under way, by token (its
	// begin), and loadedLog the first log line matching the hello's
	// Loaded: both replayed to a client that joins once the server runs.
	progress  map[string]json.RawMessage
	loaded    *regexp.Regexp
	loadedLog json.RawMessage
	// registered holds the capabilities the server registered
	// (client/registerCapability), by registration id, in order: every
	// client is told of each, and a joining one of all (pyright
	// registers its pull diagnostics so, and stops publishing).
	registered []registration
	hold       *bclient
	// lastUse is when a client last sent the server anything but an
	// answer: the idle time runs from it, whoever stays connected.
	lastUse time.Time
	// idleStop is set once the server is stopped for its idle time.
	idleStop bool
	exited   chan struct{}
}

type pendingCall struct {
	c      *bclient
	id     json.RawMessage // the id the sender used
	method string
}

// bclient is one connection.
type bclient struct {
	conn     net.Conn
	w        *framing.Writer // frames to conn
	wmu      sync.Mutex
	trusted  bool              // the trust of the run its hello was for
	commands int               // workspace/executeCommand under way
	inits    []json.RawMessage // initialize ids waiting for the first result
}

func startBackend(b *broker, key string, h *Hello) (*backend, error) {
	dir, err := os.MkdirTemp(b.dir, "state-")
	if err != nil {
		return nil, err
	}
	for name, content := range h.Files {
		if strings.ContainsAny(name, "/\\") || name == ".." {
			continue
		}
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
	}
	sub := func(s string) string { return strings.ReplaceAll(s, StateToken, dir) }
	args := make([]string, len(h.Args))
	for i, a := range h.Args {
		args[i] = sub(a)
	}
	env := make([]string, len(h.Env))
	for i, e := range h.Env {
		env[i] = sub(e)
	}
	cmd := exec.Command(h.Bin, args...)
	cmd.Dir, cmd.Env = h.Dir, env
	p, err := proc.Start(cmd, proc.Options{PipeStdin: true, PipeStdout: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", h.Bin, err)
	}
	be := &backend{b: b, key: key, hello: *h, proc: p, idle: time.Duration(h.IdleMS) * time.Millisecond, dir: dir, w: framing.NewWriter(p.Stdin()),
		pending: map[string]pendingCall{}, toClient: map[string]pendingCall{}, docs: docsync.New[*bclient](), exited: make(chan struct{}),
		progress: map[string]json.RawMessage{}}
	if h.Loaded != "" {
		be.loaded, _ = regexp.Compile(h.Loaded)
	}
	if be.idle <= 0 {
		be.idle = defaultIdle
	}
	if b.idle > 0 {
		be.idle = min(be.idle, b.idle)
	}
	be.cond = sync.NewCond(&be.mu)
	be.lastUse = time.Now()
	go be.reapIdle()
	go be.readServer(framing.NewReader(p.Stdout(), framing.WithMaxBody(maxFrame)))
	go func() {
		werr := p.Wait()
		os.RemoveAll(dir)
		close(be.exited)
		be.mu.Lock()
		cls := append([]*bclient(nil), be.clients...)
		be.hold = nil
		be.cond.Broadcast()
		be.mu.Unlock()
		// The clients are told how it ended (a crash is noted by each),
		// then see the end as the connection's.
		why := "exit status 0"
		if werr != nil {
			why = werr.Error()
		}
		be.mu.Lock()
		idle := be.idleStop
		be.mu.Unlock()
		for _, c := range cls {
			c.send(map[string]any{"jsonrpc": "2.0", "method": "$/builtintools/exited", "params": map[string]any{"error": why, "idle": idle}})
			c.conn.Close()
		}
		b.mu.Lock()
		if b.backends[key] == be {
			delete(b.backends, key)
			for w, k := range b.warm {
				if k == key {
					delete(b.warm, w)
				}
			}
		}
		b.mu.Unlock()
		b.poke()
	}()
	return be, nil
}

// usable reports whether a client may join the server: it runs and is
// not being stopped for its idle time.
func (be *backend) usable() bool {
	be.mu.Lock()
	defer be.mu.Unlock()
	return be.alive() && !be.idleStop
}

func (be *backend) alive() bool { return !lifetime.Ended(be.exited) }

// stop shuts the server down: shutdown and exit, then its group killed.
func (be *backend) stop() {
	if !be.alive() {
		return
	}
	be.send(map[string]any{"jsonrpc": "2.0", "id": "broker-shutdown", "method": "shutdown"})
	be.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	lifetime.Await(context.Background(), be.exited, 2*time.Second)
	be.proc.Kill()
	<-be.exited
}

func (be *backend) join(c *bclient) bool {
	be.mu.Lock()
	defer be.mu.Unlock()
	if !be.alive() || be.idleStop {
		return false
	}
	be.clients = append(be.clients, c)
	return true
}

// leave drops a client: its documents are closed for it, its calls
// forgotten, its hold released.
func (be *backend) leave(c *bclient) {
	be.mu.Lock()
	for i, x := range be.clients {
		if x == c {
			be.clients = append(be.clients[:i], be.clients[i+1:]...)
			break
		}
	}
	for id, p := range be.pending {
		if p.c == c {
			delete(be.pending, id)
		}
	}
	// The server's requests to it are answered for it, so the server
	// does not wait for ever.
	var unanswered []json.RawMessage
	for id, p := range be.toClient {
		if p.c == c {
			delete(be.toClient, id)
			unanswered = append(unanswered, p.id)
		}
	}
	closes := be.docs.Leave(c)
	if be.hold == c {
		be.hold = nil
		be.docs.Released(c)
		be.cond.Broadcast()
	}
	be.mu.Unlock()
	for _, id := range unanswered {
		be.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": "the client left"}})
	}
	for _, uri := range closes {
		be.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": map[string]any{"textDocument": map[string]any{"uri": uri}}})
	}
}

// reapIdle stops the server once no client has used it for its idle
// time (LSP-1), counted from the last use by any client (or the end of
// the server's last work-done progress), whether or not clients stay
// connected: none has a call at the server or holds it.
func (be *backend) reapIdle() {
	tick := time.NewTicker(max(be.idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-be.exited:
			return
		case <-tick.C:
		}
		be.mu.Lock()
		// Work-done progress under way (a workspace loading) is use
		// too: the clients wait for its end without asking anything.
		idle := len(be.pending) == 0 && be.hold == nil && !be.initWaiting && len(be.progress) == 0 && time.Since(be.lastUse) >= be.idle
		be.mu.Unlock()
		if idle {
			be.stopUnused("stopped after its idle time")
			return
		}
	}
}

// stopUnused stops a server no client is using (its idle time, or the
// memory budget). The clients are told first, as of an idle stop, so a
// process's next call sees the server gone and starts it again, rather
// than failing on a connection that ends under it or noting a crash.
func (be *backend) stopUnused(why string) {
	be.mu.Lock()
	be.idleStop = true
	cls := append([]*bclient(nil), be.clients...)
	be.mu.Unlock()
	for _, c := range cls {
		c.send(map[string]any{"jsonrpc": "2.0", "method": "$/builtintools/exited", "params": map[string]any{"error": why, "idle": true}})
		c.conn.Close()
	}
	be.stop()
}

// lastUsed is when a client last used the server.
func (be *backend) lastUsed() time.Time {
	be.mu.Lock()
	defer be.mu.Unlock()
	return be.lastUse
}

// rpcMsg is any JSON-RPC message.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *rpcMsg) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// maxFrame bounds a message through the broker (a file of lsp's
// maxFileBytes, 16 MiB, escaped as JSON, fits).
const maxFrame = 256 << 20

// frame writes v as one message to w.
func frame(w *framing.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.Write(raw)
}

func (be *backend) send(v any) {
	be.wmu.Lock()
	defer be.wmu.Unlock()
	_ = frame(be.w, v)
}

func (c *bclient) send(v any) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if frame(c.w, v) != nil {
		c.conn.Close()
	}
}

// holdWait bounds how long a client's message waits for another's hold.
const holdWait = 2 * time.Minute

// fromClient handles one message of c; false ends the connection.
func (be *backend) fromClient(c *bclient, raw []byte) bool {
	var m rpcMsg
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	m.JSONRPC = "2.0"
	if err := be.admits(c.trusted); err != nil {
		// Never forwarded: a request is answered with why.
		if !m.isResponse() && len(m.ID) > 0 {
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32600, "message": err.Error()}})
		}
		return true
	}
	be.mu.Lock()
	if be.idleStop {
		// Stopped for its idle time: the client sees the server's end.
		be.mu.Unlock()
		return false
	}
	if !m.isResponse() && m.Method != "$/builtintools/clients" && m.Method != "$/builtintools/servers" {
		be.lastUse = time.Now()
	}
	// Another client's hold: wait (bounded) until it ends.
	if m.Method != "$/builtintools/release" {
		deadline := time.Now().Add(holdWait)
		for be.hold != nil && be.hold != c && be.alive() {
			if time.Now().After(deadline) {
				be.mu.Unlock()
				if !m.isResponse() && len(m.ID) > 0 {
					c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32800, "message": "another process's preview held the server too long"}})
				}
				return true
			}
			waitCond(be.cond, time.Second)
		}
	}
	switch {
	case m.isResponse():
		p, ok := be.toClient[string(m.ID)]
		delete(be.toClient, string(m.ID))
		be.mu.Unlock()
		if ok {
			m.ID = p.id
			be.send(m)
		}
		return true
	case m.Method == "initialize" && len(m.ID) > 0:
		if be.initResult != nil {
			res := be.initResult
			replay := be.loadingLocked()
			be.mu.Unlock()
			// Before the answer: the client's initialize returns knowing
			// whether the server is still loading.
			for _, r := range replay {
				c.send(r)
			}
			c.send(rpcMsg{JSONRPC: "2.0", ID: m.ID, Result: res})
			return true
		}
		if be.initWaiting {
			c.inits = append(c.inits, m.ID)
			be.mu.Unlock()
			return true
		}
		be.initWaiting = true
		// The server outlives this client: it must not watch its pid.
		var params map[string]any
		if json.Unmarshal(m.Params, &params) == nil && params != nil {
			params["processId"] = os.Getpid()
			m.Params, _ = json.Marshal(params)
		}
	case m.Method == "initialized":
		if be.initialized {
			be.mu.Unlock()
			return true
		}
		be.initialized = true
	case m.Method == "workspace/didChangeConfiguration":
		// Every client's settings are the hello's: the server has them.
		if be.configured {
			be.mu.Unlock()
			return true
		}
		be.configured = true
	case m.Method == "shutdown" && len(m.ID) > 0:
		be.mu.Unlock()
		c.send(rpcMsg{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage("null")})
		return true
	case m.Method == "exit":
		be.mu.Unlock()
		return false
	case m.Method == "$/builtintools/hold":
		deadline := time.Now().Add(holdWait)
		for be.alive() && (be.hold != nil && be.hold != c || be.othersPending(c)) {
			if time.Now().After(deadline) {
				be.mu.Unlock()
				c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32800, "message": "other processes kept the server busy"}})
				return true
			}
			waitCond(be.cond, time.Second)
		}
		be.hold = c
		be.mu.Unlock()
		c.send(rpcMsg{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage("null")})
		return true
	case m.Method == "$/builtintools/clients" && len(m.ID) > 0:
		n, sent := len(be.clients), be.docs.Sent()
		be.mu.Unlock()
		c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"clients": n, "documentNotifications": sent}})
		return true
	case m.Method == "$/builtintools/servers" && len(m.ID) > 0:
		be.mu.Unlock()
		c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": be.b.servers()})
		return true
	case m.Method == "$/builtintools/release":
		if be.hold == c {
			be.hold = nil
			be.docs.Released(c)
			be.cond.Broadcast()
		}
		be.mu.Unlock()
		return true
	case strings.HasPrefix(m.Method, "textDocument/did"):
		out, ok, replay := be.docs.Sync(c, &m, m.Method, m.Params, be.hold == c, be.pullsLocked)
		be.mu.Unlock()
		if ok {
			be.send(out)
		}
		if replay != nil {
			c.send(replay)
		}
		return true
	}
	if len(m.ID) > 0 {
		be.nextID++
		id := json.RawMessage(strconv.FormatInt(be.nextID, 10))
		be.pending[string(id)] = pendingCall{c: c, id: m.ID, method: m.Method}
		if m.Method == "initialize" {
			be.initID = string(id)
		}
		if m.Method == "workspace/executeCommand" {
			c.commands++
		}
		m.ID = id
	}
	be.mu.Unlock()
	be.send(m)
	return true
}

// waitCond waits on cond (its lock held) at most d.
func waitCond(cond *sync.Cond, d time.Duration) {
	t := time.AfterFunc(d, cond.Broadcast)
	cond.Wait()
	t.Stop()
}

// othersPending reports whether a client other than c has a call at the
// server.
func (be *backend) othersPending(c *bclient) bool {
	for _, p := range be.pending {
		if p.c != c {
			return true
		}
	}
	return false
}

// loadingLocked is what a client joining a running server is told of its
// loading: the begin of each work-done progress under way, and the log
// line that said the workspace was loaded.
func (be *backend) loadingLocked() []json.RawMessage {
	var out []json.RawMessage
	for _, raw := range be.progress {
		out = append(out, raw)
	}
	if be.loadedLog != nil {
		out = append(out, be.loadedLog)
	}
	if len(be.registered) > 0 {
		var regs []json.RawMessage
		for _, r := range be.registered {
			regs = append(regs, r.raw)
		}
		params, _ := json.Marshal(map[string]any{"registrations": regs})
		raw, _ := json.Marshal(rpcMsg{JSONRPC: "2.0", ID: be.ownIDLocked(), Method: "client/registerCapability", Params: params})
		out = append(out, raw)
	}
	return out
}

// registration is one capability the server registered.
type registration struct {
	id  string
	raw json.RawMessage
}

// noteRegistrationLocked keeps the server's capability registrations
// and drops its unregistrations; true for a request every client is to
// see.
func (be *backend) noteRegistrationLocked(m *rpcMsg) bool {
	switch m.Method {
	case "client/registerCapability":
		var p struct {
			Registrations []json.RawMessage `json:"registrations"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return false
		}
		for _, raw := range p.Registrations {
			var r struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(raw, &r) == nil && len(be.registered) < maxRegistrations {
				be.registered = append(be.registered, registration{r.ID, append(json.RawMessage(nil), raw...)})
			}
		}
		return true
	case "client/unregisterCapability":
		var p struct {
			Unregistrations []struct {
				ID string `json:"id"`
			} `json:"unregisterations"` // sic, as the protocol spells it
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return false
		}
		for _, u := range p.Unregistrations {
			be.registered = slices.DeleteFunc(be.registered, func(r registration) bool { return r.id == u.ID })
		}
		return true
	}
	return false
}

// maxRegistrations bounds the registrations kept for replay.
const maxRegistrations = 1024

// ownID is an id for a request of the broker's own to a client, whose
// answer nobody waits for.
func (be *backend) ownID() json.RawMessage {
	be.mu.Lock()
	defer be.mu.Unlock()
	return be.ownIDLocked()
}

func (be *backend) ownIDLocked() json.RawMessage {
	be.nextID++
	return json.RawMessage(strconv.Quote("own" + strconv.FormatInt(be.nextID, 10)))
}

// readServer routes the server's messages.
func (be *backend) readServer(r *framing.Reader) {
	for {
		raw, err := r.Read()
		if err != nil {
			return
		}
		var m rpcMsg
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		m.JSONRPC = "2.0"
		switch {
		case m.isResponse():
			be.mu.Lock()
			p, ok := be.pending[string(m.ID)]
			delete(be.pending, string(m.ID))
			var waiting []*bclient
			// The first initialize's answer, even when the client that
			// sent it has gone: the others wait for it.
			if be.initID != "" && string(m.ID) == be.initID {
				be.initID = ""
				be.initWaiting = false
				if len(m.Error) == 0 {
					be.initResult = m.Result
				}
				waiting = append(waiting, be.clients...)
			}
			if ok && p.method == "workspace/executeCommand" {
				p.c.commands--
			}
			be.cond.Broadcast()
			be.mu.Unlock()
			for _, c := range waiting {
				be.mu.Lock()
				ids := c.inits
				c.inits = nil
				be.mu.Unlock()
				for _, id := range ids {
					c.send(rpcMsg{JSONRPC: "2.0", ID: id, Result: m.Result, Error: m.Error})
				}
			}
			if ok {
				m.ID = p.id
				if len(m.Result) == 0 && len(m.Error) == 0 {
					m.Result = json.RawMessage("null")
				}
				p.c.send(m)
			}
		case len(m.ID) > 0:
			// A request to the client: the one running a command, else
			// the holder, else the oldest.
			be.mu.Lock()
			var to *bclient
			for _, c := range be.clients {
				if c.commands > 0 {
					to = c
					break
				}
			}
			if to == nil {
				to = be.hold
			}
			if to == nil && len(be.clients) > 0 {
				to = be.clients[0]
			}
			if to == nil {
				be.mu.Unlock()
				be.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
				continue
			}
			be.nextID++
			id := json.RawMessage(strconv.Quote("b" + strconv.FormatInt(be.nextID, 10)))
			be.toClient[string(id)] = pendingCall{c: to, id: m.ID, method: m.Method}
			var others []*bclient
			if be.noteRegistrationLocked(&m) {
				for _, c := range be.clients {
					if c != to {
						others = append(others, c)
					}
				}
			}
			be.mu.Unlock()
			orig := m.ID
			m.ID = id
			to.send(m)
			m.ID = orig
			// The others are told too; their answers are the broker's
			// to drop (no call waits for them).
			for _, c := range others {
				c.send(rpcMsg{JSONRPC: "2.0", ID: be.ownID(), Method: m.Method, Params: m.Params})
			}
		case m.Method == "textDocument/publishDiagnostics":
			be.publish(&m)
		default:
			be.mu.Lock()
			be.noteLoadingLocked(&m, raw)
			cls := append([]*bclient(nil), be.clients...)
			be.mu.Unlock()
			for _, c := range cls {
				c.send(m)
			}
		}
	}
}

// noteLoadingLocked keeps what loadingLocked replays.
func (be *backend) noteLoadingLocked(m *rpcMsg, raw []byte) {
	switch m.Method {
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		switch p.Value.Kind {
		case "begin":
			if len(be.progress) < maxProgress {
				be.progress[string(p.Token)] = append(json.RawMessage(nil), raw...)
			}
		case "end":
			delete(be.progress, string(p.Token))
			be.lastUse = time.Now()
		}
	case "window/logMessage":
		if be.loaded == nil || be.loadedLog != nil {
			return
		}
		var p struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Params, &p) == nil && be.loaded.MatchString(p.Message) {
			be.loadedLog = append(json.RawMessage(nil), raw...)
		}
	}
}

// maxProgress bounds the progress a server may have under way that the
// broker keeps for replay.
const maxProgress = 256

// defaultIdle is a server's idle time when a hello gives none (lsp's
// DefaultIdleTimeout).
const defaultIdle = 10 * time.Minute

// publish sends a server's diagnostics to the clients the documents say
// (docsync.Table.Publish), then the server what they ask of it.
func (be *backend) publish(m *rpcMsg) {
	be.mu.Lock()
	outs, recheck := be.docs.Publish(be.clients, m, m.Method, m.Params)
	be.mu.Unlock()
	for _, o := range outs {
		o.To.send(o.Msg)
	}
	for _, m := range recheck {
		be.send(m)
	}
}

// pullsLocked reports whether the server is asked for diagnostics
// (textDocument/diagnostic, offered in its initialize answer or
// registered): a client then gets them of the server's current text.
func (be *backend) pullsLocked() bool {
	var res struct {
		Capabilities struct {
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(be.initResult, &res) == nil {
		if p := string(res.Capabilities.DiagnosticProvider); p != "" && p != "null" && p != "false" {
			return true
		}
	}
	for _, r := range be.registered {
		var x struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(r.raw, &x) == nil && x.Method == "textDocument/diagnostic" {
			return true
		}
	}
	return false
}
