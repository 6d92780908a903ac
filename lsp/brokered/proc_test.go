package brokered

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// connected returns a Proc over one end of a unix connection and the
// broker's end.
func connected(t *testing.T) (*Proc, net.Conn) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); b.Close() })
	return &Proc{conn: c, pid: 1, tail: proc.NewTail(1 << 10), done: make(chan struct{})}, b
}

// The broker's close is seen before any read, and the end it announced
// is what Wait says once the connection is gone.
func TestEndAsTheBrokerSaidIt(t *testing.T) {
	p, b := connected(t)
	if p.PeerGone() {
		t.Fatal("PeerGone while the broker holds the connection")
	}
	p.NoteExit([]byte(`{"error":"stopped after 10m idle","idle":true}`))
	if !p.StoppedIdle() {
		t.Error("StoppedIdle is false after the broker said idle")
	}
	b.Close()
	if !p.PeerGone() {
		t.Fatal("PeerGone is false after the broker closed")
	}
	if _, err := p.Conn().Read(make([]byte, 1)); err == nil {
		t.Fatal("a read after the broker closed succeeded")
	}
	if err := p.Wait(); err == nil || err.Error() != "stopped after 10m idle" {
		t.Fatalf("Wait: got %v", err)
	}
}
