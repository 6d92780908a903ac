// Package brokered is a language server the user's broker holds (LSP-9),
// as one process sees it: a process whose pipes are the connection to the
// broker, whose end is the connection's, and which the broker may say it
// stopped (crashed or idle). Package lsp runs it as it runs a child of its
// own; the broker's side is package broker.
package brokered

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
)

// Proc is one server reached through the broker.
type Proc struct {
	conn net.Conn
	pid  int
	tail *proc.Tail // never written: the server's output is the broker's
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	exited string // how the broker said the server ended
	idle   bool   // the broker stopped it for its idle time
}

// Open dials the broker in dir (starting it with command, when not nil
// and none answers) and greets it with h, the server it names.
func Open(ctx context.Context, dir string, command []string, h broker.Hello) (*Proc, error) {
	c, err := broker.Dial(ctx, dir, command)
	if err != nil {
		return nil, err
	}
	pid, err := broker.Greet(ctx, c, h)
	if err != nil {
		return nil, err
	}
	return &Proc{conn: c, pid: pid, tail: proc.NewTail(1 << 10), done: make(chan struct{})}, nil
}

// Pid is the server's process id, as the broker gave it.
func (p *Proc) Pid() int { return p.pid }

// Tail is the server's output, which this process does not see.
func (p *Proc) Tail() *proc.Tail { return p.tail }

// Kill ends the connection, which is the server's end for this process.
func (p *Proc) Kill() error { p.end(); return p.conn.Close() }

// Wait returns once the connection has ended, with how the server ended.
func (p *Proc) Wait() error {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited != "" {
		return errors.New(p.exited)
	}
	return errors.New("its connection to the language-server broker closed (the broker ended)")
}

// NoteExit records how the broker said the server ended (the params of
// its $/builtintools/exited).
func (p *Proc) NoteExit(params []byte) {
	var e struct {
		Error string `json:"error"`
		Idle  bool   `json:"idle"`
	}
	if json.Unmarshal(params, &e) == nil && e.Error != "" {
		p.mu.Lock()
		p.exited, p.idle = e.Error, e.Idle
		p.mu.Unlock()
	}
}

// StoppedIdle reports whether the broker stopped the server for its idle
// time (no crash: the next call starts it again).
func (p *Proc) StoppedIdle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle
}

func (p *Proc) end() { p.once.Do(func() { close(p.done) }) }

// Conn is the connection as the server's input and output; a failed read
// or write ends the process.
func (p *Proc) Conn() io.ReadWriteCloser { return pipes{p} }

type pipes struct{ p *Proc }

func (r pipes) Read(b []byte) (int, error) {
	n, err := r.p.conn.Read(b)
	if err != nil {
		r.p.end()
	}
	return n, err
}

func (r pipes) Write(b []byte) (int, error) {
	n, err := r.p.conn.Write(b)
	if err != nil {
		r.p.end()
	}
	return n, err
}

func (r pipes) Close() error { return r.p.Kill() }

// PeerGone reports whether the broker has closed the connection though
// no read of it has seen the end yet (a broker just killed).
func (p *Proc) PeerGone() bool {
	uc, ok := p.conn.(*net.UnixConn)
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
	return gone
}
