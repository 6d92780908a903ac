// Package broker is the language-server broker (issue 32 §2, LSP-9): one
// process per user that owns the
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
//     Until the server has published of the texts the holder restored,
//     no other client gets a publish that may be of the preview's text
//     (package docsync).
//
// A server no client has used for its idle time is shut down, whether
// or not clients stay connected; the broker exits when it has no server
// and no client.
package broker

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
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
)

// Hello is the first line a client sends.
type Hello struct {
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
	// loaded its workspace (langserver.Spec.LoadedLog).
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

// StateToken stands for the state folder in a hello's args and env: the
// broker puts its own folder there.
const StateToken = "{builtin-tools-state}"

// reply is the broker's answer to a hello.
type reply struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

func (h *Hello) key() string {
	k := *h
	k.IdleMS, k.Warm, k.Ask = 0, "", false
	raw, _ := json.Marshal(k)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// broker serves language servers to the clients of one user.
type broker struct {
	ln       net.Listener
	mu       sync.Mutex
	backends map[string]*backend
	warm     map[string]string // a hello's Warm → the key of the server it got
	clients  int
	changed  chan struct{}
	idle     time.Duration // caps a hello's idle time, when positive
	budgetKB int64         // the memory budget of all its servers, set at its start (0: none)
	dir      string
}

// Dir is the private folder of the user's broker socket:
// $XDG_RUNTIME_DIR/builtin-tools, else the user's cache folder.
func Dir() string {
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

// Serve listens on dir/lsp-broker.sock until it has had no server
// and no client for grace, or ctx ends.
// A positive idle caps the idle time clients ask for; budgetKB is the
// memory budget of all its servers together (0: none), whatever budget
// a later client has (issue 32 §3: one budget, the broker's).
func Serve(ctx context.Context, dir string, grace, idle time.Duration, budgetKB int64) error {
	if err := privateDir(dir); err != nil {
		return err
	}
	sock := Socket(dir)
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
	b := &broker{ln: ln, backends: map[string]*backend{}, warm: map[string]string{}, changed: make(chan struct{}, 1), idle: idle, budgetKB: budgetKB, dir: dir}
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

func (b *broker) poke() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

func (b *broker) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.serve(c.(*net.UnixConn))
	}
}

func (b *broker) serve(c *net.UnixConn) {
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
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil || h.Bin == "" && h.Warm == "" {
		writeLine(c, reply{Error: "a hello names the server's program"})
		return
	}
	var be *backend
	if h.Bin == "" {
		if be, err = b.warmBackend(&h); err != nil {
			writeLine(c, reply{Error: err.Error()})
			return
		}
		if h.Ask {
			writeLine(c, reply{PID: be.proc.Pid()})
			return
		}
	} else if be, err = b.backendFor(&h); err != nil {
		writeLine(c, reply{Error: err.Error()})
		return
	}
	cl := &bclient{conn: c, w: framing.NewWriter(c), trusted: h.Trusted}
	// The reply goes out before any message of the server can.
	cl.wmu.Lock()
	if !be.join(cl) {
		writeLine(c, reply{Error: "the server exited"})
		cl.wmu.Unlock()
		return
	}
	defer be.leave(cl)
	err = writeLine(c, reply{PID: be.proc.Pid()})
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
func (b *broker) backendFor(h *Hello) (*backend, error) {
	if err := checkoutRule(h); err != nil {
		return nil, err
	}
	key := h.key()
	b.mu.Lock()
	defer b.mu.Unlock()
	if be := b.backends[key]; be != nil && be.usable() {
		if h.Warm != "" {
			b.warm[h.Warm] = key
		}
		return be, nil
	}
	b.makeRoomLocked(b.budgetKB)
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
// hello's server and folder, and the hello's trust may use it.
func (b *broker) warmBackend(h *Hello) (*backend, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	be := b.backends[b.warm[h.Warm]]
	if be == nil || !be.usable() || be.hello.Server != h.Server || be.hello.Dir != h.Dir {
		return nil, errors.New("no server of that name runs")
	}
	if err := be.admits(h.Trusted); err != nil {
		return nil, err
	}
	if err := checkoutRule(&be.hello); err != nil {
		return nil, err
	}
	return be, nil
}

// admits says why a client of the given trust may not use the server,
// nil when it may. Checked on each message a client sends (the trust
// rules hold per request, not only at the server's start): an untrusted
// run never reaches a server started for a trusted one, nor the reverse.
func (be *backend) admits(trusted bool) error {
	if trusted != be.hello.Trusted {
		was, is := "a trusted", "an untrusted"
		if trusted {
			was, is = is, was
		}
		return fmt.Errorf("the %s server for %s was started for %s root, and this process's run is %s one: the broker gives a run only servers started with its own trust (its next call starts one of its own)",
			be.hello.Server, be.hello.Dir, was, is)
	}
	return nil
}

// checkoutRule applies the checkout-toolchain rule (N1, untrusted.Check)
// to an untrusted hello, whatever the process worked out itself: at each
// full hello before a server is started or joined, and to the server's
// own hello at each warm join.
func checkoutRule(h *Hello) error {
	if h.Trusted {
		return nil
	}
	if err := untrusted.Check(h.Bin, h.Dir, h.Env); err != nil {
		return fmt.Errorf("the broker refused the %s server: %w", h.Server, err)
	}
	return nil
}
