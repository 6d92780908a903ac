package lsp

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// The broker (issue 32 §2, LSP-9): one process per user that owns the
// language servers and lets the Supervisors of every process of that
// user share them. A client connects to its unix socket once per server
// it needs, says which server in a hello line, and then speaks LSP on the
// connection as it would on the server's pipes; the broker multiplexes
// the clients of one server:
//   - request ids are rewritten per client and mapped back;
//   - initialize reaches the server once, later clients get its result;
//     initialized likewise; shutdown is answered here, exit closes the
//     client's connection;
//   - didOpen/didChange/didClose are counted per document: the server's
//     versions are the broker's, kept monotonic, and publishDiagnostics
//     goes to each client with the version it sent for that text;
//   - a didOpen of the text the server already has reaches no server: the
//     last diagnostics published for that version are replayed to the
//     client (a joining process's first answer waits for no new check),
//     and so are the server's loading state (work-done progress under
//     way, the log line that says it has loaded) after its initialize;
//   - server→client requests go to the client running a command
//     (workspace/applyEdit), else to the longest connected one;
//   - $/builtintools/hold gives one client the server alone (a preview):
//     other clients' messages wait until $/builtintools/release or until
//     the holder's connection ends.
// A server with no client for its idle time is shut down; the broker
// exits when it has no server and no client.

// BrokerHello is the first line a client sends.
type BrokerHello struct {
	Server  string            `json:"server"`
	Bin     string            `json:"bin"`
	Args    []string          `json:"args"`
	Env     []string          `json:"env"`
	Dir     string            `json:"dir"`
	Trusted bool              `json:"trusted"`
	Files   map[string]string `json:"files,omitempty"` // the state folder's files, by name
	// Init and Settings are what the client sends in initialize and
	// answers workspace/configuration with: clients that differ there
	// get servers of their own.
	Init     json.RawMessage `json:"init,omitempty"`
	Settings json.RawMessage `json:"settings,omitempty"`
	// Loaded matches the log line by which the server says it has
	// loaded its workspace (ServerSpec.LoadedLog).
	Loaded string `json:"loaded,omitempty"`
	IdleMS int64  `json:"idle_ms"`
	// Warm names the server as the client works it out before its pins
	// and probe (lsp's warmKey): a full hello registers it for the server
	// it gets; a hello with no Bin joins the live server registered
	// under it (of the same Server, Dir and trust), or is refused; with
	// Ask the reply only says whether there is one.
	Warm string `json:"warm,omitempty"`
	Ask  bool   `json:"ask,omitempty"`
}

// stateToken stands for the state folder in a hello's args and env: the
// broker puts its own folder there.
const stateToken = "{builtin-tools-state}"

// brokerReply is the broker's answer to a hello.
type brokerReply struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

func (h *BrokerHello) key() string {
	k := *h
	k.IdleMS, k.Warm, k.Ask = 0, "", false
	raw, _ := json.Marshal(k)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Broker serves language servers to the clients of one user.
type Broker struct {
	ln       net.Listener
	mu       sync.Mutex
	backends map[string]*backend
	warm     map[string]string // a hello's Warm → the key of the server it got
	clients  int
	changed  chan struct{}
	idle     time.Duration // caps a hello's idle time, when positive
	dir      string
}

// BrokerDir is the private folder of the user's broker socket:
// $XDG_RUNTIME_DIR/builtin-tools, else the user's cache folder.
func BrokerDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "builtin-tools")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "builtin-tools", "run")
	}
	return filepath.Join(os.TempDir(), "builtin-tools-"+strconv.Itoa(os.Getuid()))
}

// privateDir makes dir 0700 and checks it is the user's own and no one
// else's to enter: a socket in it is reached by this user only.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a folder of this user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// ServeBroker listens on dir/lsp-broker.sock until it has had no server
// and no client for grace, or ctx ends.
// A positive idle caps the idle time clients ask for.
func ServeBroker(ctx context.Context, dir string, grace, idle time.Duration) error {
	if err := privateDir(dir); err != nil {
		return err
	}
	sock := filepath.Join(dir, "lsp-broker.sock")
	// One broker per user: the lock is held for the broker's life, and
	// the kernel lets go of it when the broker dies, however it dies.
	lock, err := os.OpenFile(filepath.Join(dir, "lsp-broker.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.New("another broker runs in " + dir)
	}
	os.WriteFile(filepath.Join(dir, "lsp-broker.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	// A socket left by a broker that died.
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	b := &Broker{ln: ln, backends: map[string]*backend{}, warm: map[string]string{}, changed: make(chan struct{}, 1), idle: idle, dir: dir}
	defer func() {
		ln.Close()
		b.mu.Lock()
		var all []*backend
		for _, be := range b.backends {
			all = append(all, be)
		}
		b.mu.Unlock()
		for _, be := range all {
			be.stop()
		}
	}()
	go b.accept()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-b.changed:
			timer.Reset(grace)
		case <-timer.C:
			b.mu.Lock()
			empty := len(b.backends) == 0 && b.clients == 0
			b.mu.Unlock()
			if empty {
				return nil
			}
			timer.Reset(grace)
		}
	}
}

func (b *Broker) poke() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

func (b *Broker) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.serve(c.(*net.UnixConn))
	}
}

func (b *Broker) serve(c *net.UnixConn) {
	defer c.Close()
	// Only this user's processes: the folder is private, and the peer's
	// credentials say so too.
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return
	}
	b.mu.Lock()
	b.clients++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.clients--
		b.mu.Unlock()
		b.poke()
	}()
	b.poke()
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	var h BrokerHello
	if err := json.Unmarshal(line, &h); err != nil || h.Bin == "" && h.Warm == "" {
		writeLine(c, brokerReply{Error: "a hello names the server's program"})
		return
	}
	var be *backend
	if h.Bin == "" {
		if be = b.warmBackend(&h); be == nil {
			writeLine(c, brokerReply{Error: "no server of that name runs"})
			return
		}
		if h.Ask {
			writeLine(c, brokerReply{PID: be.proc.Pid()})
			return
		}
	} else if be, err = b.backendFor(&h); err != nil {
		writeLine(c, brokerReply{Error: err.Error()})
		return
	}
	cl := &bclient{conn: c, w: framing.NewWriter(c), versions: map[string]map[int]int{}, latest: map[string]int{}}
	// The reply goes out before any message of the server can.
	cl.wmu.Lock()
	if !be.join(cl) {
		writeLine(c, brokerReply{Error: "the server exited"})
		cl.wmu.Unlock()
		return
	}
	defer be.leave(cl)
	err = writeLine(c, brokerReply{PID: be.proc.Pid()})
	cl.wmu.Unlock()
	if err != nil {
		return
	}
	fr := framing.NewReader(r, framing.WithMaxBody(maxFrame))
	for {
		msg, err := fr.Read()
		if err != nil {
			return
		}
		if !be.fromClient(cl, msg) {
			return
		}
	}
}

func writeLine(w io.Writer, v any) error {
	raw, _ := json.Marshal(v)
	_, err := w.Write(append(raw, '\n'))
	return err
}

// backendFor finds or starts the server a hello names.
func (b *Broker) backendFor(h *BrokerHello) (*backend, error) {
	key := h.key()
	b.mu.Lock()
	defer b.mu.Unlock()
	if be := b.backends[key]; be != nil && be.alive() {
		if h.Warm != "" {
			b.warm[h.Warm] = key
		}
		return be, nil
	}
	be, err := startBackend(b, key, h)
	if err != nil {
		return nil, err
	}
	b.backends[key] = be
	if h.Warm != "" {
		b.warm[h.Warm] = key
	}
	return be, nil
}

// warmBackend is the live server a warm hello names, if it is of the
// hello's server, folder and trust.
func (b *Broker) warmBackend(h *BrokerHello) *backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	be := b.backends[b.warm[h.Warm]]
	if be == nil || !be.alive() || be.hello.Server != h.Server || be.hello.Dir != h.Dir || be.hello.Trusted != h.Trusted {
		return nil
	}
	return be
}

// backend is one server and its clients.
type backend struct {
	b     *Broker
	key   string
	hello BrokerHello // the first, which started it
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
	docSent     int64 // document notifications sent to the server
	configured  bool  // a client's didChangeConfiguration went through (the settings are the hello's, the same for all)
	docs        map[string]*bdoc
	// progress holds each work-done progress under way, by token (its
	// begin), and loadedLog the first log line matching the hello's
	// Loaded: both replayed to a client that joins once the server runs.
	progress  map[string]json.RawMessage
	loaded    *regexp.Regexp
	loadedLog json.RawMessage
	hold      *bclient
	idleTimer *time.Timer
	exited    chan struct{}
}

type pendingCall struct {
	c      *bclient
	id     json.RawMessage // the id the sender used
	method string
}

type bdoc struct {
	version int // the server's, monotonic
	open    map[*bclient]bool
	texts   map[int][32]byte // hash of the text at a server version, when known
	// pub is the last versioned publish for the document, nil after an
	// unversioned one or once no client has it open.
	pub *lastPublish
}

// lastPublish is a server's publishDiagnostics, kept for replay.
type lastPublish struct {
	version int
	diags   json.RawMessage
	at      time.Time
}

// bclient is one connection.
type bclient struct {
	conn     net.Conn
	w        *framing.Writer // frames to conn
	wmu      sync.Mutex
	versions map[string]map[int]int // uri → server version → client version
	latest   map[string]int         // uri → the server version of its last change
	commands int                    // workspace/executeCommand under way
	inits    []json.RawMessage      // initialize ids waiting for the first result
	// unsaved are documents whose didOpen reached no server (the server
	// has that text): the didSave that follows would only make it check
	// the text again.
	unsaved map[string]bool
}

func startBackend(b *Broker, key string, h *BrokerHello) (*backend, error) {
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
	sub := func(s string) string { return strings.ReplaceAll(s, stateToken, dir) }
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
		pending: map[string]pendingCall{}, toClient: map[string]pendingCall{}, docs: map[string]*bdoc{}, exited: make(chan struct{}),
		progress: map[string]json.RawMessage{}}
	if h.Loaded != "" {
		be.loaded, _ = regexp.Compile(h.Loaded)
	}
	if be.idle <= 0 {
		be.idle = DefaultIdleTimeout
	}
	if b.idle > 0 {
		be.idle = min(be.idle, b.idle)
	}
	be.cond = sync.NewCond(&be.mu)
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
		for _, c := range cls {
			c.send(map[string]any{"jsonrpc": "2.0", "method": "$/builtintools/exited", "params": map[string]any{"error": why}})
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

func (be *backend) alive() bool {
	select {
	case <-be.exited:
		return false
	default:
		return true
	}
}

// stop shuts the server down: shutdown and exit, then its group killed.
func (be *backend) stop() {
	if !be.alive() {
		return
	}
	be.send(map[string]any{"jsonrpc": "2.0", "id": "broker-shutdown", "method": "shutdown"})
	be.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	select {
	case <-be.exited:
	case <-time.After(2 * time.Second):
	}
	be.proc.Kill()
	<-be.exited
}

func (be *backend) join(c *bclient) bool {
	be.mu.Lock()
	defer be.mu.Unlock()
	if !be.alive() {
		return false
	}
	be.clients = append(be.clients, c)
	if be.idleTimer != nil {
		be.idleTimer.Stop()
		be.idleTimer = nil
	}
	return true
}

// leave drops a client: its documents are closed for it, its calls
// forgotten, its hold released; the last one out starts the idle clock.
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
	var closes []string
	for uri, d := range be.docs {
		if d.open[c] {
			delete(d.open, c)
			if len(d.open) == 0 {
				closes = append(closes, uri)
			}
		}
	}
	if be.hold == c {
		be.hold = nil
		be.cond.Broadcast()
	}
	if len(be.clients) == 0 && be.alive() {
		be.idleTimer = time.AfterFunc(be.idle, func() {
			be.mu.Lock()
			empty := len(be.clients) == 0
			be.mu.Unlock()
			if empty {
				be.stop()
			}
		})
	}
	be.mu.Unlock()
	for _, id := range unanswered {
		be.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": "the client left"}})
	}
	for _, uri := range closes {
		be.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": map[string]any{"textDocument": map[string]any{"uri": uri}}})
	}
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

// maxFrame bounds a message through the broker (a file of maxFileBytes,
// escaped as JSON, fits).
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
	be.mu.Lock()
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
		n, sent := len(be.clients), be.docSent
		be.mu.Unlock()
		c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"clients": n, "documentNotifications": sent}})
		return true
	case m.Method == "$/builtintools/release":
		if be.hold == c {
			be.hold = nil
			be.cond.Broadcast()
		}
		be.mu.Unlock()
		return true
	case strings.HasPrefix(m.Method, "textDocument/did"):
		out, ok := be.syncLocked(c, &m)
		replay := be.replayLocked(c, &m, out)
		if ok {
			be.docSent++
		}
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

type docParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
		Text    string `json:"text"`
		Lang    string `json:"languageId"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range json.RawMessage `json:"range,omitempty"`
		Text  string          `json:"text"`
	} `json:"contentChanges"`
}

// syncLocked maps a document notification of c to what the server gets:
// a didOpen of a document another client holds open becomes a didChange
// to its text, a didClose of one still open for others is dropped, and
// versions are the broker's.
func (be *backend) syncLocked(c *bclient, m *rpcMsg) (any, bool) {
	var p docParams
	if json.Unmarshal(m.Params, &p) != nil {
		return m, true
	}
	uri := p.TextDocument.URI
	d := be.docs[uri]
	if d == nil {
		d = &bdoc{open: map[*bclient]bool{}, texts: map[int][32]byte{}}
		be.docs[uri] = d
	}
	mapVersion := func(text *string) int {
		d.version++
		if text != nil {
			d.texts[d.version] = sha256.Sum256([]byte(*text))
		}
		delete(d.texts, d.version-32)
		if c.versions[uri] == nil {
			c.versions[uri] = map[int]int{}
		}
		c.versions[uri][d.version] = p.TextDocument.Version
		delete(c.versions[uri], d.version-32)
		c.latest[uri] = d.version
		return d.version
	}
	switch m.Method {
	case "textDocument/didOpen":
		wasOpen := len(d.open) > 0
		d.open[c] = true
		if h, ok := d.texts[d.version]; wasOpen && ok && h == sha256.Sum256([]byte(p.TextDocument.Text)) {
			// The server has this text: the client's version stands
			// for the server's current one, and nothing is sent.
			if c.versions[uri] == nil {
				c.versions[uri] = map[int]int{}
			}
			c.versions[uri][d.version] = p.TextDocument.Version
			c.latest[uri] = d.version
			if c.unsaved == nil {
				c.unsaved = map[string]bool{}
			}
			c.unsaved[uri] = true
			return nil, false
		}
		v := mapVersion(&p.TextDocument.Text)
		if wasOpen {
			return map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": v},
				"contentChanges": []map[string]any{{"text": p.TextDocument.Text}}}}, true
		}
		return map[string]any{"jsonrpc": "2.0", "method": m.Method, "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": v, "languageId": p.TextDocument.Lang, "text": p.TextDocument.Text}}}, true
	case "textDocument/didSave":
		if c.unsaved[uri] {
			delete(c.unsaved, uri)
			return nil, false
		}
		return m, true
	case "textDocument/didChange":
		delete(c.unsaved, uri)
		var text *string
		if len(p.ContentChanges) == 1 && len(p.ContentChanges[0].Range) == 0 {
			text = &p.ContentChanges[0].Text
		}
		v := mapVersion(text)
		var params map[string]any
		json.Unmarshal(m.Params, &params)
		params["textDocument"] = map[string]any{"uri": uri, "version": v}
		return map[string]any{"jsonrpc": "2.0", "method": m.Method, "params": params}, true
	case "textDocument/didClose":
		delete(d.open, c)
		delete(c.versions, uri)
		delete(c.latest, uri)
		delete(c.unsaved, uri)
		if len(d.open) == 0 {
			d.pub = nil
		}
		return m, len(d.open) == 0
	}
	return m, true
}

// replayLocked is, for a didOpen of c that reached no server (out is
// nil: the server has that text at its current version), the last
// diagnostics the server published for that version, as c's: the ones c
// would get if the server checked the text again. Only a versioned
// publish about that very text is replayed, so c never sees diagnostics
// of a text it did not send.
func (be *backend) replayLocked(c *bclient, m *rpcMsg, out any) any {
	if m.Method != "textDocument/didOpen" || out != nil {
		return nil
	}
	var p docParams
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	uri := p.TextDocument.URI
	d := be.docs[uri]
	if d == nil || d.pub == nil || d.pub.version != d.version || c.latest[uri] != d.version {
		return nil
	}
	cv, ok := c.versions[uri][d.version]
	if !ok {
		return nil
	}
	return map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
		"params": map[string]any{"uri": uri, "version": cv, "diagnostics": d.pub.diags,
			quietKey: time.Since(d.pub.at).Milliseconds()}}
}

// quietKey, in a replayed publish, says how many milliseconds ago the
// server published it: no further publish came since, so a client that
// waits for publishes to settle need not wait again.
const quietKey = "builtintoolsQuietMs"

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
	return out
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
			be.mu.Unlock()
			orig := m.ID
			m.ID = id
			to.send(m)
			m.ID = orig
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

// publish sends a server's diagnostics to each client, with the version
// that client sent for the text they are about; a client whose text is
// another gets none.
func (be *backend) publish(m *rpcMsg) {
	var p struct {
		URI     string          `json:"uri"`
		Version *int            `json:"version,omitempty"`
		Diags   json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	be.mu.Lock()
	type out struct {
		c   *bclient
		msg any
	}
	var outs []out
	d := be.docs[p.URI]
	if d != nil && len(d.open) > 0 {
		if p.Version != nil {
			d.pub = &lastPublish{version: *p.Version, diags: p.Diags, at: time.Now()}
		} else {
			d.pub = nil
		}
	}
	for _, c := range be.clients {
		if p.Version == nil {
			outs = append(outs, out{c, m})
			continue
		}
		if d == nil || !d.open[c] {
			// About a text another client sent: its version means
			// nothing to this one.
			continue
		}
		cv, ok := c.versions[p.URI][*p.Version]
		if !ok {
			// Diagnostics for a version another client sent: this
			// client's if its latest text is the same.
			lv := c.latest[p.URI]
			h1, ok1 := d.texts[*p.Version]
			h2, ok2 := d.texts[lv]
			if !ok1 || !ok2 || h1 != h2 {
				continue
			}
			cv = c.versions[p.URI][lv]
		}
		outs = append(outs, out{c, map[string]any{"jsonrpc": "2.0", "method": m.Method,
			"params": map[string]any{"uri": p.URI, "version": cv, "diagnostics": p.Diags}}})
	}
	be.mu.Unlock()
	for _, o := range outs {
		o.c.send(o.msg)
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
