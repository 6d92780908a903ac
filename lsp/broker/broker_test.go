package broker

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve runs a broker in a fresh folder for the test, ended with it.
func serve(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "broker")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, dir, time.Minute, 0) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	for range 500 {
		if _, err := os.Stat(Socket(dir)); err == nil {
			return dir
		}
		select {
		case err := <-served:
			t.Fatalf("the broker ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("no broker socket")
	return ""
}

// LSP-9: one broker per user's folder, which is private; a hello that
// names no program, or a server that does not run, is refused in a
// sentence, and so is a warm hello no running server answers to.
func TestServeFolderAndHellos(t *testing.T) {
	dir := serve(t)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the broker's folder: %v %v", fi.Mode(), err)
	}
	if err := Serve(context.Background(), dir, time.Second, 0); err == nil || !strings.Contains(err.Error(), "another broker") {
		t.Fatalf("a second broker in the folder: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, h := range []Hello{
		{Server: "x"},
		{Server: "x", Dir: dir, Warm: "no such name"},
		{Server: "x", Dir: dir, Warm: "no such name", Ask: true},
		{Server: "x", Bin: filepath.Join(dir, "no-such-program"), Dir: dir},
	} {
		c, err := Dial(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Greet(ctx, c, h); err == nil {
			t.Errorf("hello %+v: answered", h)
		} else {
			t.Logf("hello %+v: %v", h, err)
		}
	}
	// No broker and no way to start one: the dial fails at once.
	if _, err := Dial(ctx, t.TempDir(), nil); err == nil {
		t.Error("a dial with no broker answered")
	} else if _, ok := err.(*net.OpError); !ok {
		t.Errorf("a dial with no broker: %T %v", err, err)
	}
}
