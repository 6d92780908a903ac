package evaltool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A cell that runs forever, after marking the file started in the root.
var forever = map[string]string{
	"python":     "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.05)",
	"javascript": "require('fs').writeFileSync('started', '')\nfor (;;) {}",
}

// appeared reports once path exists, false after a minute.
func appeared(path string) bool {
	return testenv.Until(time.Minute, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// waitFor returns once path exists.
func waitFor(t *testing.T, path string) {
	t.Helper()
	if !appeared(path) {
		t.Fatalf("%s never appeared: the cell did not start", path)
	}
}

func evalArgs(lang, code string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": code, "description": "a step of the test at hand", "language": lang})
	return b
}

// Issue 22 §2: a call whose context is cancelled while its cell runs
// interrupts the cell as the clocks do; the result says so, the kernel
// keeps its state, and the next cell runs at once (the inactivity budget,
// an hour here, is what would end it otherwise).
func TestCancelledCallInterrupts(t *testing.T) {
	for _, lang := range []string{"python", "javascript"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "javascript" {
				testenv.LookPath(t, "node")
			}
			r := newRun(t, eval.Config{Inactivity: time.Hour})
			set := map[string]string{"python": "kept = 41", "javascript": "let kept = 41"}[lang]
			if res, err := r.Call(context.Background(), tiers.Normal, "eval", evalArgs(lang, set)); err != nil || res.IsError {
				t.Fatalf("%v %s", err, registry.ResultText(res))
			}
			started := filepath.Join(r.Root(), "started")
			ctx, cancel := context.WithCancel(context.Background())
			// Cancelled once the cell runs (or after a minute, when the
			// result then says the cell never started).
			go func() { appeared(started); cancel() }()
			res, err := r.Call(ctx, tiers.Normal, "eval", evalArgs(lang, forever[lang]))
			if err != nil {
				t.Fatal(err)
			}
			want(t, registry.ResultText(res), "Interrupted: the call was cancelled.", "kernel state: preserved")
			next, cancelNext := context.WithTimeout(context.Background(), time.Minute)
			defer cancelNext()
			res, err = r.Call(next, tiers.Normal, "eval", evalArgs(lang, "kept + 1"))
			if err != nil {
				t.Fatal(err)
			}
			want(t, registry.ResultText(res), "[cell 3 · kernel state: preserved", "\n42")
		})
	}
}

// The same over stdio: `serve` run as a client runs it, a tools/call, then
// the client's notifications/cancelled for it. The server answers the
// cancelled call with the interrupted cell, and the next cell sees the
// state from before.
func TestCancelledOverStdio(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	root := t.TempDir()
	bin := testenv.Command(t)
	tr := transport.NewStdio(bin, append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH")), "serve", "--root", root, "--mode", "normal")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	request := func(id int64, method string, params any) (*transport.JSONRPCResponse, error) {
		return tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(id), Method: method, Params: params})
	}
	if _, err := request(1, "initialize", map[string]any{"protocolVersion": mcp.LATEST_PROTOCOL_VERSION,
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "cancel-test", "version": "1"}}); err != nil {
		t.Fatal(err)
	}
	tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}})
	callEval := func(id int64, code string) (string, error) {
		resp, err := request(id, "tools/call", map[string]any{"name": "eval", "arguments": json.RawMessage(evalArgs("python", code))})
		if err != nil {
			return "", err
		}
		if resp.Error != nil {
			return "", fmt.Errorf("call %d: %s", id, resp.Error.Message)
		}
		return string(resp.Result), nil
	}
	if text, err := callEval(2, "kept = 41"); err != nil || !strings.Contains(text, "preserved") {
		t.Fatalf("%v %s", err, text)
	}
	got := make(chan string, 1)
	go func() {
		text, err := callEval(3, forever["python"])
		if err != nil {
			text = "error: " + err.Error()
		}
		got <- text
	}()
	waitFor(t, filepath.Join(root, "started"))
	n := mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/cancelled"}}
	n.Params.AdditionalFields = map[string]any{"requestId": 3, "reason": "the user pressed stop"}
	if err := tr.SendNotification(ctx, n); err != nil {
		t.Fatal(err)
	}
	text := <-got
	want(t, text, "Interrupted: the call was cancelled", "kernel state: preserved")
	text, err := callEval(4, "kept + 1")
	if err != nil {
		t.Fatal(err)
	}
	want(t, text, "[cell 3 · kernel state: preserved", `\n42`)
}

// The same with mcp-go's client doing the cancelling, as a client does
// when its user stops a call: CallTool's context ends, the client sends
// notifications/cancelled, and the next call finds the kernel's state.
func TestCancelledByClient(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	root := t.TempDir()
	tr := transport.NewStdio(testenv.Command(t), append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH")), "serve", "--root", root, "--mode", "normal")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cl := client.NewClient(tr)
	defer cl.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cancel-test", Version: "1"}
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := func(ctx context.Context, code string) (string, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "eval"
		req.Params.Arguments = evalArgs("python", code)
		res, err := cl.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		return registry.ResultText(res), nil
	}
	if text, err := call(ctx, "kept = 41"); err != nil || !strings.Contains(text, "preserved") {
		t.Fatalf("%v %s", err, text)
	}
	stop, stopNow := context.WithCancel(ctx)
	go func() { appeared(filepath.Join(root, "started")); stopNow() }()
	if _, err := call(stop, forever["python"]); err == nil {
		t.Fatal("the cancelled call returned a result to the client that cancelled it")
	}
	text, err := call(ctx, "kept + 1")
	if err != nil {
		t.Fatal(err)
	}
	want(t, text, "[cell 3 · kernel state: preserved", "\n42")
}
