package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// serverProc is a server's process as a Supervisor sees it: its own child
// (proc.Process) or a server the broker holds (brokerProc).
type serverProc interface {
	Pid() int
	Kill() error
	Wait() error
	Tail() *proc.Tail
}

// brokerProc is a server reached through the broker: its end is the
// connection's.
type brokerProc struct {
	conn net.Conn
	pid  int
	tail *proc.Tail
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	exited string // how the broker said the server ended
}

func (b *brokerProc) Pid() int         { return b.pid }
func (b *brokerProc) Tail() *proc.Tail { return b.tail }
func (b *brokerProc) Kill() error      { b.end(); return b.conn.Close() }
func (b *brokerProc) Wait() error {
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exited != "" {
		return errors.New(b.exited)
	}
	return errors.New("its connection to the language-server broker closed (the broker ended)")
}

// noteExit records how the broker said the server ended.
func (b *brokerProc) noteExit(params []byte) {
	var p struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(params, &p) == nil && p.Error != "" {
		b.mu.Lock()
		b.exited = p.Error
		b.mu.Unlock()
	}
}
func (b *brokerProc) end() { b.once.Do(func() { close(b.done) }) }

// brokerRWC is the connection as the server's pipes, ending the process
// when it fails.
type brokerRWC struct {
	b     *brokerProc
	wrote interface{ Add(int64) int64 }
}

func (r brokerRWC) Read(p []byte) (int, error) {
	n, err := r.b.conn.Read(p)
	if err != nil {
		r.b.end()
	}
	return n, err
}

func (r brokerRWC) Write(p []byte) (int, error) {
	n, err := r.b.conn.Write(p)
	r.wrote.Add(int64(n))
	if err != nil {
		r.b.end()
	}
	return n, err
}

func (r brokerRWC) Close() error { r.b.end(); return r.b.conn.Close() }

// brokerSocket is the socket in a broker folder.
func brokerSocket(dir string) string { return filepath.Join(dir, "lsp-broker.sock") }

// dialBroker connects to the broker in dir, starting one with command
// when none answers (a broker that died is replaced so).
func dialBroker(ctx context.Context, dir string, command []string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", brokerSocket(dir))
	if err == nil || len(command) == 0 {
		return c, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	// It serves other processes after this one ends.
	if _, err := proc.StartDetached(exec.Command(command[0], command[1:]...)); err != nil {
		return nil, fmt.Errorf("starting the language-server broker: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err = d.DialContext(ctx, "unix", brokerSocket(dir))
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return c, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// perShell are variables that differ between processes of one user
// without changing what a server does (the shell's, and internal/proc's
// tag, which the broker's own start sets): left out of a hello, so they
// do not keep processes from sharing.
var perShell = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true, "BUILTIN_TOOLS_PROC": true}

// startViaBroker asks the broker for l's server.
func startViaBroker(ctx context.Context, cfg *Config, spec *ServerSpec, l *Launch) (*brokerProc, error) {
	h := BrokerHello{Server: spec.ID, Bin: l.Bin, Dir: l.Root, Trusted: l.Trusted, IdleMS: cfg.IdleTimeout.Milliseconds()}
	sub := func(s string) string { return strings.ReplaceAll(s, l.StateDir, stateToken) }
	for _, a := range l.Args {
		h.Args = append(h.Args, sub(a))
	}
	env := l.Env
	if env == nil {
		// What a child of this process would inherit, not the broker's.
		env = os.Environ()
	}
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if perShell[name] {
			continue
		}
		h.Env = append(h.Env, sub(e))
	}
	if ents, err := os.ReadDir(l.StateDir); err == nil {
		for _, e := range ents {
			if data, err := os.ReadFile(filepath.Join(l.StateDir, e.Name())); err == nil && e.Type().IsRegular() {
				if h.Files == nil {
					h.Files = map[string]string{}
				}
				h.Files[e.Name()] = strings.ReplaceAll(string(data), l.StateDir, stateToken)
			}
		}
	}
	h.Init, _ = json.Marshal(l.InitializationOptions)
	if spec.LoadedLog != nil {
		h.Loaded = spec.LoadedLog.String()
	}
	h.Settings, _ = json.Marshal(spec.Settings)
	c, err := dialBroker(ctx, cfg.Broker, cfg.BrokerCommand)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := writeLine(c, h); err != nil {
		c.Close()
		return nil, err
	}
	// Read the reply a byte at a time: what follows it is the server's.
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			c.Close()
			return nil, fmt.Errorf("the language-server broker: %w", err)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
		if len(line) > 64<<10 {
			c.Close()
			return nil, errors.New("the language-server broker's reply is too long")
		}
	}
	var r brokerReply
	if err := json.Unmarshal(line, &r); err != nil || r.Error != "" {
		c.Close()
		if err == nil {
			err = errors.New(r.Error)
		}
		return nil, fmt.Errorf("the language-server broker: %w", err)
	}
	return &brokerProc{conn: c, pid: r.PID, tail: proc.NewTail(1 << 10), done: make(chan struct{})}, nil
}

// holdAlone takes the server's view alone (a preview): of the calls of
// this process, and through the broker of every other process.
func (s *server) holdAlone(ctx context.Context, bound time.Duration) error {
	if err := s.view.lockAlone(ctx, bound); err != nil {
		return err
	}
	if _, ok := s.proc.(*brokerProc); ok {
		hctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		if err := s.conn.Call(hctx, "$/builtintools/hold", nil, nil); err != nil {
			s.view.unlockAlone()
			if hctx.Err() != nil && ctx.Err() == nil {
				return errViewBusy
			}
			return err
		}
	}
	return nil
}

// unholdAlone ends holdAlone.
func (s *server) unholdAlone() {
	if _, ok := s.proc.(*brokerProc); ok {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
		_ = s.conn.Notify(ctx, "$/builtintools/release", nil)
		cancel()
	}
	s.view.unlockAlone()
}

// processes asks the broker how many connections (processes, one per
// pool) share the server; 0 for a server of this process's own.
func (s *server) processes(ctx context.Context) int {
	if _, ok := s.proc.(*brokerProc); !ok || !s.alive() {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var res struct {
		Clients int `json:"clients"`
	}
	if s.conn.Call(ctx, "$/builtintools/clients", nil, &res) != nil {
		return 0
	}
	return res.Clients
}

// peerGone reports, for a server reached through the broker, whether the
// broker has closed the connection though this process's read of it has
// not seen the end yet (a broker just killed): the caller then ends the
// server here, so the call starts afresh instead of failing on it.
func (s *server) peerGone() bool {
	bp, ok := s.proc.(*brokerProc)
	if !ok {
		return false
	}
	uc, ok := bp.conn.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = n == 0 && err == nil
	})
	if gone {
		bp.Kill()
		select {
		case <-s.exited:
		case <-time.After(time.Second):
		}
	}
	return gone
}
