package broker

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// serve runs a broker in a fresh folder for the test, ended with it.
func serve(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "broker")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, dir, time.Minute, 0, 0) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	for range 500 {
		// The socket's file comes at bind, before listen: a connection
		// says it listens (CI once saw "connection refused").
		if c, err := net.Dial("unix", Socket(dir)); err == nil {
			c.Close()
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
	if err := Serve(context.Background(), dir, time.Second, 0, 0); err == nil || !strings.Contains(err.Error(), "another broker") {
		t.Fatalf("a second broker in the folder: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, h := range []Hello{
		{Server: "x"},
		{Server: "x", Dir: dir, Warm: "no such name"},
		{Server: "x", Dir: dir, Warm: "no such name", Ask: true},
		{Server: "x", Bin: filepath.Join(dir, "no-such-program"), Dir: dir, Trusted: true},
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

// goModule is a Go module for a test's gopls, and gopls's path.
func goModule(t *testing.T) (root, gopls string) {
	t.Helper()
	gopls = testenv.LookPath(t, "gopls")
	testenv.SetupPath()
	root = t.TempDir()
	testenv.WriteTree(t, root, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "m.go": "package m\n\nfunc F() int { return 1 }\n"})
	return root, gopls
}

// withEnv is env with name set to value.
func withEnv(env []string, name, value string) []string {
	out := []string{name + "=" + value}
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// Issue 32 §2, LSP-9: the trust rules are the broker's, per request. A
// process of the other trust that names a running gopls by the warm name
// it learned is refused with why, and so is an untrusted hello whose
// environment lets the checkout pick the Go toolchain (no server starts).
// Before, the warm hello got "no server of that name runs", and the
// untrusted hello started its gopls.
func TestTrustPerHello(t *testing.T) {
	root, gopls := goModule(t)
	dir := serve(t)
	greet := greeter(t, dir)
	env := pinnedEnv()
	if err := greet(Hello{Server: "gopls", Bin: gopls, Dir: root, Trusted: true, Env: env, Warm: "learned"}); err != nil {
		t.Fatal(err)
	}
	err := greet(Hello{Server: "gopls", Dir: root, Trusted: false, Warm: "learned"})
	if err == nil || !strings.Contains(err.Error(), "started for a trusted root, and this process's run is an untrusted one") {
		t.Fatalf("an untrusted warm hello for a trusted server: %v", err)
	}
	err = greet(Hello{Server: "gopls", Bin: gopls, Dir: root, Trusted: false, Env: withEnv(env, "GOTOOLCHAIN", "auto")})
	if err == nil || !strings.Contains(err.Error(), "GOTOOLCHAIN=auto lets the checkout choose the Go toolchain") {
		t.Fatalf("an untrusted hello with GOTOOLCHAIN=auto: %v", err)
	}
	if err := greet(Hello{Server: "gopls", Bin: gopls, Dir: root, Trusted: false, Env: env}); err != nil {
		t.Fatalf("an untrusted hello with the toolchain pinned: %v", err)
	}
}

// Issue 32 §2: every message a client sends is checked against the
// server's trust before it is forwarded: a client whose run has the
// other trust gets its request answered with why, and the server never
// sees it.
func TestTrustPerRequest(t *testing.T) {
	root, gopls := goModule(t)
	b := &broker{backends: map[string]*backend{}, warm: map[string]string{}, changed: make(chan struct{}, 1), dir: t.TempDir()}
	h := &Hello{Server: "gopls", Bin: gopls, Dir: root, Trusted: true, Env: os.Environ()}
	be, err := startBackend(b, h.key(), h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.stop)
	mine, theirs := net.Pipe()
	defer theirs.Close()
	cl := &bclient{conn: mine, w: framing.NewWriter(mine), trusted: false}
	go be.fromClient(cl, []byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`))
	theirs.SetReadDeadline(time.Now().Add(time.Minute))
	raw, err := framing.NewReader(theirs).Read()
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		ID    int `json:"id"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &reply) != nil || reply.ID != 7 || !strings.Contains(reply.Error.Message, "gives a run only servers started with its own trust") {
		t.Fatalf("an untrusted client's request to a trusted server: %.300s", raw)
	}
	be.mu.Lock()
	pending := len(be.pending)
	be.mu.Unlock()
	if pending != 0 {
		t.Fatalf("the request reached the server: %d pending", pending)
	}
}
