package framing

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-dap"
	"github.com/sourcegraph/jsonrpc2"
)

// TestDAPMessageRoundTrip (FRM-1): a go-dap message written with Writer is
// decoded by dap.DecodeProtocolMessage from Reader's body.
func TestDAPMessageRoundTrip(t *testing.T) {
	sent := []dap.Message{
		&dap.InitializeRequest{
			Request: dap.Request{ProtocolMessage: dap.ProtocolMessage{Seq: 1, Type: "request"}, Command: "initialize"},
			Arguments: dap.InitializeRequestArguments{
				ClientID: "builtin-tools", AdapterID: "go", LinesStartAt1: true, ColumnsStartAt1: true,
				PathFormat: "path", SupportsRunInTerminalRequest: true,
			},
		},
		&dap.OutputEvent{
			Event: dap.Event{ProtocolMessage: dap.ProtocolMessage{Seq: 2, Type: "event"}, Event: "output"},
			Body:  dap.OutputEventBody{Category: "stdout", Output: "Content-Length: 5\r\n\r\nnot a frame\n"},
		},
	}
	var stream bytes.Buffer
	w := NewWriter(&stream)
	for _, m := range sent {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	bodies := readFrames(t, NewReader(&stream, WithStrictCRLF()))
	if len(bodies) != len(sent) {
		t.Fatalf("%d messages read, %d sent", len(bodies), len(sent))
	}
	for i, body := range bodies {
		got, err := dap.DecodeProtocolMessage([]byte(body))
		if err != nil {
			t.Fatalf("message %d: go-dap cannot decode the body: %v", i, err)
		}
		if !reflect.DeepEqual(got, sent[i]) {
			t.Errorf("message %d:\n got %#v\nwant %#v", i, got, sent[i])
		}
	}
}

// TestInteropWithGoDAP: frames cross between this package and go-dap's own
// base-protocol code in both directions.
func TestInteropWithGoDAP(t *testing.T) {
	req := &dap.ContinueRequest{
		Request:   dap.Request{ProtocolMessage: dap.ProtocolMessage{Seq: 7, Type: "request"}, Command: "continue"},
		Arguments: dap.ContinueArguments{ThreadId: 3},
	}
	// go-dap writes, we read.
	var a bytes.Buffer
	if err := dap.WriteProtocolMessage(&a, req); err != nil {
		t.Fatal(err)
	}
	body, err := NewReader(&a, WithStrictCRLF()).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dap.DecodeProtocolMessage(body); err != nil || !reflect.DeepEqual(got, req) {
		t.Fatalf("decoded %#v, %v", got, err)
	}
	// We write, go-dap reads.
	var b bytes.Buffer
	if err := NewWriter(&b).Write(body); err != nil {
		t.Fatal(err)
	}
	got, err := dap.ReadProtocolMessage(bufio.NewReader(&b))
	if err != nil || !reflect.DeepEqual(got, req) {
		t.Fatalf("go-dap read %#v, %v", got, err)
	}
}

// TestInteropWithVSCodeCodec: frames cross between this package and
// jsonrpc2.VSCodeObjectCodec in both directions.
func TestInteropWithVSCodeCodec(t *testing.T) {
	msg := map[string]any{"jsonrpc": "2.0", "id": 1.0, "method": "textDocument/hover", "params": map[string]any{"x": "é\r\n"}}
	var a bytes.Buffer
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(&a, msg); err != nil {
		t.Fatal(err)
	}
	body, err := NewReader(&a, WithStrictCRLF()).Read()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil || !reflect.DeepEqual(got, msg) {
		t.Fatalf("read %v, %v", got, err)
	}
	var b bytes.Buffer
	if err := NewWriter(&b).Write(body); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(bufio.NewReader(&b), &got); err != nil || !reflect.DeepEqual(got, msg) {
		t.Fatalf("VSCodeObjectCodec read %v, %v", got, err)
	}
}

// TestObjectStreamJSONRPC (FRM-1): real jsonrpc2.Conns on both ends of a
// net.Pipe, talking through ObjectStream, with a banner printed by the
// "server" before its first frame (FRM-2) and concurrent calls in both
// directions.
func TestObjectStreamJSONRPC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clientEnd, serverEnd := net.Pipe()

	notes := make(chan string, 20)
	// Async: the server calls back into the client from inside a handler.
	server := jsonrpc2.NewConn(ctx, NewObjectStream(serverEnd), jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(
		func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			switch req.Method {
			case "echo":
				return req.Params, nil
			case "askBack":
				// Server-to-client request while the client's call is pending.
				var answer string
				if err := conn.Call(ctx, "client/name", nil, &answer); err != nil {
					return nil, err
				}
				return "client is " + answer, nil
			case "log":
				var s string
				if err := json.Unmarshal(*req.Params, &s); err != nil {
					return nil, err
				}
				notes <- s
				return nil, nil
			}
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method}
		})), jsonrpc2.SetLogger(testLogger{t}))

	clientStream := NewObjectStream(clientEnd)
	client := jsonrpc2.NewConn(ctx, clientStream, jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(
		func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			if req.Method == "client/name" {
				return "framing-test", nil
			}
			return nil, fmt.Errorf("unexpected %s", req.Method)
		})), jsonrpc2.SetLogger(testLogger{t}))

	// Calls from many goroutines exercise concurrent WriteObject.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			want := map[string]any{"n": float64(i), "text": "line one\r\nContent-Length: 3\r\n\r\nxyz"}
			var got map[string]any
			if err := client.Call(ctx, "echo", want, &got); err != nil {
				t.Errorf("echo %d: %v", i, err)
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("echo %d: got %v, want %v", i, got, want)
			}
			if err := client.Notify(ctx, "log", fmt.Sprintf("note %d", i)); err != nil {
				t.Errorf("notify %d: %v", i, err)
			}
		})
	}
	wg.Wait()

	var answer string
	if err := client.Call(ctx, "askBack", nil, &answer); err != nil || answer != "client is framing-test" {
		t.Fatalf("askBack = %q, %v", answer, err)
	}
	err := client.Call(ctx, "nope", nil, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.CodeMethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}
	seen := map[string]bool{}
	for range 20 {
		select {
		case n := <-notes:
			seen[n] = true
		case <-ctx.Done():
			t.Fatalf("server got %d of 20 notifications", len(seen))
		}
	}
	if len(seen) != 20 {
		t.Errorf("server got %d distinct notifications, want 20", len(seen))
	}

	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-client.DisconnectNotify():
	case <-ctx.Done():
		t.Fatal("client did not notice the server closing")
	}
}

// TestObjectStreamBanner: a server that prints a banner on stdout before its
// first frame still talks JSON-RPC, and the banner is kept (FRM-2).
func TestObjectStreamBanner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clientEnd, serverEnd := net.Pipe()
	clientStream := NewObjectStream(clientEnd)
	client := jsonrpc2.NewConn(ctx, clientStream, jsonrpc2.HandlerWithError(
		func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			return nil, nil
		}), jsonrpc2.SetLogger(testLogger{t}))
	defer client.Close()

	if _, err := io.WriteString(serverEnd, "pyls 1.0 starting: reading stdin\r\nwarning: no config\n"); err != nil {
		t.Fatal(err)
	}
	server := jsonrpc2.NewConn(ctx, NewObjectStream(serverEnd), jsonrpc2.HandlerWithError(
		func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			return map[string]string{"got": req.Method}, nil
		}), jsonrpc2.SetLogger(testLogger{t}))
	defer server.Close()

	var got map[string]string
	if err := client.Call(ctx, "initialize", map[string]any{}, &got); err != nil || got["got"] != "initialize" {
		t.Fatalf("initialize = %v, %v", got, err)
	}
	want := []string{"pyls 1.0 starting: reading stdin", "warning: no config"}
	if b := clientStream.Banner(); !reflect.DeepEqual(b, want) {
		t.Fatalf("Banner() = %q, want %q", b, want)
	}
}

// TestObjectStreamBadJSON: a frame that is not JSON is a clear error.
func TestObjectStreamBadJSON(t *testing.T) {
	rwc := &rwCloser{Reader: bytes.NewReader([]byte(frame("{not json"))), Writer: io.Discard}
	var v any
	err := NewObjectStream(rwc).ReadObject(&v)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		t.Fatalf("ReadObject = %v, want a wrapped *json.SyntaxError", err)
	}
}

type rwCloser struct {
	io.Reader
	io.Writer
}

func (rwCloser) Close() error { return nil }

// testLogger routes jsonrpc2's protocol-error log to the test.
type testLogger struct{ t *testing.T }

func (l testLogger) Printf(format string, v ...any) { l.t.Logf(format, v...) }
