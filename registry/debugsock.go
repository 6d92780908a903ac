//go:build unix

package registry

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/registry/debugsock"
	"github.com/builtin-tools/builtin-tools/registry/stdiosession"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// ServeDebug lets a developer inspect this live run — with the MCP
// Inspector, through `builtin-tools attach SOCKET` — while the harness that
// links the library keeps using it. It listens on a unix socket in a
// private folder (0700; a client of another user is refused), serves one
// client at a time in mode (readonly when mode is empty) and returns the
// socket's path. Nothing listens on a network. The socket and its folder go
// when ctx ends or the run closes.
//
// Each client has a session of its own, apart from the harness's peers: it
// never sees their questions, progress or answers. A second client is
// answered, on its initialize, with who holds the socket and since when; a
// client that does not initialize within 10 s is closed.
func (r *Run) ServeDebug(ctx context.Context, mode tiers.Mode) (string, error) {
	return r.serveDebug(ctx, mode, debugsock.DefaultWaits)
}

func (r *Run) serveDebug(ctx context.Context, mode tiers.Mode, waits debugsock.Waits) (string, error) {
	if mode == "" {
		mode = tiers.ReadOnly
	}
	if _, err := tiers.ParseMode(string(mode)); err != nil {
		return "", err
	}
	if r.ctx.Err() != nil {
		return "", ErrClosed
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
	go debugsock.Accept(ctx, ln, waits, func(ctx context.Context, conn net.Conn, sess *stdiosession.Session) error {
		return r.serveStdio(ctx, mode, conn, sess)
	})
	return sock, nil
}
