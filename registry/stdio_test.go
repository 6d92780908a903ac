package registry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// stdioPeer serves a run over pipes and reads its answers.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func serveStdio(t *testing.T, cfg registry.Config, tools ...registry.Descriptor) *stdioPeer {
	t.Helper()
	cfg.Families = []registry.Extension{toyFiles, family("extra", tools...)}
	r := newRun(t, cfg)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		p.done <- r.ServeStdio(context.Background(), tiers.Normal, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// answer reads the next message and decodes it.
func (p *stdioPeer) answer() map[string]any {
	p.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := p.out.ReadString('\n')
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("reading an answer: %v", r.err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			p.t.Fatalf("answer is not JSON: %q", r.line)
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatal("no answer within 30 s")
	}
	return nil
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if a := p.answer(); a["result"] == nil {
		p.t.Fatalf("initialize: %v", a)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func errorOf(a map[string]any) (float64, string) {
	e, _ := a["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

// D15: requests before initialize are refused; ids must be strings,
// numbers or null. D10: malformed frames are answered -32700 with a null
// id and the server stays up.
func TestStdioProtocolChecks(t *testing.T) {
	p := serveStdio(t, registry.Config{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}`)
	if code, msg := errorOf(p.answer()); code != -32002 || !strings.Contains(msg, "initialize first") {
		t.Fatalf("tools/call before initialize: %v %q", code, msg)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if a := p.answer(); a["result"] == nil {
		t.Fatalf("ping before initialize: %v", a)
	}
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)
	a := p.answer()
	if code, _ := errorOf(a); code != -32600 || a["id"] != nil {
		t.Fatalf("object id: %v", a)
	}
	p.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"caf\xe9.txt\"}}}")
	if code, msg := errorOf(p.answer()); code != -32700 || !strings.Contains(msg, "not UTF-8") {
		t.Fatalf("invalid UTF-8: %v %q", code, msg)
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, bad := range []string{"garbage", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, `[]`, `42`,
		"\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":6,"method":"ping"}`} {
		p.send(bad)
		a := p.answer()
		if code, _ := errorOf(a); code != -32700 || a["id"] != nil {
			t.Errorf("%.40q: %v, want -32700 with a null id", bad, a)
		}
	}
	// N24: where the top-level id can be read, the answer carries it, so
	// the client is not left waiting: valid JSON nested deeper than the
	// decoder goes, a message cut short, two objects on a line.
	for id, bad := range map[float64]string{
		9:  `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":` + deep + `}}`,
		11: `{"jsonrpc":"2.0","method":"ping","params":{"x":` + deep + `, "s": "}\"{"}, "id": 11}`,
		4:  `{"jsonrpc":"2.0","id":4,"method":"ping"`,
		7:  `{"jsonrpc":"2.0","id":7,"method":"ping"}{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	} {
		p.send(bad)
		a := p.answer()
		if code, _ := errorOf(a); code != -32700 || a["id"] != id {
			t.Errorf("%.40q: %v, want -32700 with id %v", bad, a, id)
		}
	}
	// An unknown tool: -32602, as the MCP specification says, naming the
	// tools there are.
	p.send(`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"debug","arguments":{}}}`)
	if code, msg := errorOf(p.answer()); code != -32602 || !strings.Contains(msg, `unknown tool "debug"`) || !strings.Contains(msg, "put") {
		t.Errorf("unknown tool: %v %q", code, msg)
	}
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if a := p.answer(); a["id"] != float64(10) || a["result"] == nil {
		t.Fatalf("the server did not stay up: %v", a)
	}
}

// D10: a frame over the limit is answered with an error naming the limit,
// with its id when it leads the message, and read with bounded memory; the
// server goes on.
func TestStdioFrameLimit(t *testing.T) {
	const max = 1 << 20
	p := serveStdio(t, registry.Config{MaxFrameBytes: max})
	p.initialize()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const huge = 256 << 20
	go func() {
		io.WriteString(p.in, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read","arguments":{"path":"`)
		chunk := []byte(strings.Repeat("a", 1<<20))
		for i := 0; i < huge>>20; i++ {
			p.in.Write(chunk)
		}
		io.WriteString(p.in, `"}}}`+"\n")
	}()
	a := p.answer()
	code, msg := errorOf(a)
	if code != -32600 || a["id"] != float64(11) || !strings.Contains(msg, fmt.Sprint(max)) {
		t.Fatalf("over-long frame: %v", a)
	}
	if len(msg) > 1000 {
		t.Errorf("the error is %d bytes", len(msg))
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
		t.Errorf("reading a %d MiB frame allocated %d MiB", huge>>20, grown>>20)
	}
	p.send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	if a := p.answer(); a["id"] != float64(12) {
		t.Fatalf("after the long frame: %v", a)
	}
}

// D6: when the input ends, a call blocked for good does not keep serve
// from returning.
func TestStdioReturnsDespiteABlockedCall(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	stuck := toolOf("stuck", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		close(started)
		<-release // ignores ctx, as a call blocked in a system call would
		return "late", nil
	})
	p := serveStdio(t, registry.Config{}, stuck)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"stuck","arguments":{}}}`)
	<-started
	p.in.Close()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after its input ended")
	}
}

// D7: a result over the run's output budget is cut on a character
// boundary, with a note of how much was left out.
func TestResultBudget(t *testing.T) {
	big := toolOf("big", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		return strings.Repeat("é", 600), nil
	})
	r := newRun(t, registry.Config{Families: []registry.Extension{family("b", big)}, OutputBudget: 501})
	text, isErr := call(t, r, tiers.Normal, "big", `{}`)
	if isErr || !contains(text, "600 characters", "output budget is 501") || !utf8.ValidString(text) || utf8.RuneCountInString(text) > 501+200 {
		t.Fatalf("%d characters, valid %v: %q", utf8.RuneCountInString(text), utf8.ValidString(text), text)
	}
}

// A request followed at once by the end of input is answered, not
// cancelled: mcp-go cancels calls in flight when its input ends, so it is
// told of the end only once what was asked is answered (bounded).
func TestRequestBeforeEndOfInputIsAnswered(t *testing.T) {
	slow := toolOf("slow", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return "finished", nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	})
	for range 5 {
		p := serveStdio(t, registry.Config{}, slow)
		p.initialize()
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		p.in.Close()
		a := p.answer()
		res, _ := a["result"].(map[string]any)
		if b, _ := json.Marshal(res); res == nil || res["isError"] == true || !strings.Contains(string(b), "finished") {
			t.Fatalf("answer: %v", a)
		}
	}
}

// The 2026-07-28 revision has no initialize: a client discovers the server,
// then each request names its revision in _meta; neither is refused as
// "before initialize".
func TestModernRequestsNeedNoInitialize(t *testing.T) {
	p := serveStdio(t, registry.Config{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
	if code, msg := errorOf(p.answer()); code == -32002 {
		t.Fatalf("server/discover refused: %s", msg)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"look","arguments":{"path":"x"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`)
	if a := p.answer(); a["result"] == nil {
		t.Fatalf("a modern tools/call without initialize: %v", a)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if code, _ := errorOf(p.answer()); code != -32002 {
		t.Fatal("a request of the earlier era before initialize was not refused")
	}
}
