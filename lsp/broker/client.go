package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// The client's side: what a process needs to reach the broker. What it
// then says on the connection is LSP, as to the server itself.

// Socket is the socket in a broker folder.
func Socket(dir string) string { return filepath.Join(dir, "lsp-broker.sock") }

// Dial connects to the broker in dir, starting one with command when
// none answers and command is given (a broker that died is replaced so).
func Dial(ctx context.Context, dir string, command []string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", Socket(dir))
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
		c, err = d.DialContext(ctx, "unix", Socket(dir))
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return c, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Greet sends h on c and reads the broker's reply, returning the
// server's pid: the server's messages follow on c. c is closed on an
// error, and when ctx ends before the reply.
func Greet(ctx context.Context, c net.Conn, h Hello) (int, error) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := writeLine(c, h); err != nil {
		c.Close()
		return 0, err
	}
	// Read the reply a byte at a time: what follows it is the server's.
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			c.Close()
			return 0, fmt.Errorf("the language-server broker: %w", err)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
		if len(line) > 64<<10 {
			c.Close()
			return 0, errors.New("the language-server broker's reply is too long")
		}
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil || r.Error != "" {
		c.Close()
		if err == nil {
			err = errors.New(r.Error)
		}
		return 0, fmt.Errorf("the language-server broker: %w", err)
	}
	return r.PID, nil
}
