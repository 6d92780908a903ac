//go:build unix

package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// ServeDebug lets a developer inspect this live run — with the MCP
// Inspector, through `builtin-tools attach SOCKET` — while the harness that
// links the library keeps using it. It listens on a unix socket in a
// private folder (0700; a client of another user is refused), serves one
// client at a time in mode (readonly when mode is empty) and returns the
// socket's path. Nothing listens on a network. The socket and its folder go
// when ctx ends or the run closes.
func (r *Run) ServeDebug(ctx context.Context, mode tiers.Mode) (string, error) {
	if mode == "" {
		mode = tiers.ReadOnly
	}
	if _, err := tiers.ParseMode(string(mode)); err != nil {
		return "", err
	}
	if r.ctx.Err() != nil {
		return "", errors.New("the run is closed")
	}
	dir, err := proc.TempDir("debug-")
	if err != nil {
		return "", fmt.Errorf("a folder for the debug socket: %w", err)
	}
	sock := filepath.Join(dir, "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("the debug socket: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			ln.Close()
			os.RemoveAll(dir)
		})
	}
	r.OnClose(func() error { stop(); return nil })
	go func() {
		select {
		case <-ctx.Done():
		case <-r.ctx.Done():
		}
		stop()
	}()
	go r.acceptDebug(ctx, ln, mode)
	return sock, nil
}

// acceptDebug serves the socket's clients one at a time; one that comes
// while another is served is told so and closed.
func (r *Run) acceptDebug(ctx context.Context, ln net.Listener, mode tiers.Mode) {
	busy := make(chan struct{}, 1)
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		if err := sameUser(conn); err != nil {
			fmt.Fprintf(conn, "%s\n", jsonError(err.Error()))
			conn.Close()
			continue
		}
		select {
		case busy <- struct{}{}:
		default:
			fmt.Fprintf(conn, "%s\n", jsonError("another client is attached to this run's debug socket; one at a time"))
			conn.Close()
			continue
		}
		go func() {
			defer func() { <-busy }()
			defer conn.Close()
			if err := r.ServeStdio(ctx, mode, conn, conn); err != nil && ctx.Err() == nil {
				fmt.Fprintf(stderr, "builtin-tools: debug socket: %v\n", err)
			}
		}()
	}
}

// jsonError is a JSON-RPC error with no id, for a client turned away.
func jsonError(msg string) string {
	m, _ := json.Marshal(msg)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%s}}`, m)
}
