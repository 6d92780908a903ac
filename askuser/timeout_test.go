package askuser_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Issue 19 §2 guard: the ask timeout ends ask_user at its time through
// every port: a harness's function, the terminal, and
// (TestAskTimeoutThroughElicitation, TestAskTimeoutOverStdio) elicitation
// on both protocol eras. In a synctest bubble a 10-minute timeout passes
// at once, and the call ends exactly then.
func TestAskTimeoutBoundsEveryPort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 10 * time.Minute
		never := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
			<-ctx.Done()
			return askuser.Answer{}, ctx.Err()
		})
		r := newRun(t, builtintools.Options{Ask: never, AskTimeout: timeout})
		t0 := time.Now()
		res, err := r.Call(context.Background(), tiers.Normal, "ask_user", mustJSON(colour))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d != timeout || !res.IsError || !strings.Contains(registry.ResultText(res), "nobody answered within 10m0s") {
			t.Errorf("a port that never answers: after %s: %s", d, registry.ResultText(res))
		}

		in, w := io.Pipe() // a terminal nobody types on
		defer w.Close()
		term := askuser.NewTerminal(in, io.Discard)
		defer term.Close()
		a := &askuser.Asker{Port: term, Timeout: timeout}
		t0 = time.Now()
		_, err = a.Ask(context.Background(), askuser.Question{Question: "Go on?", Options: []askuser.Option{{Label: "yes"}}})
		if d := time.Since(t0); d != timeout || !errors.Is(err, askuser.ErrTimeout) {
			t.Errorf("a terminal nobody answers: after %s: %v", d, err)
		}
	})
}

// hangingElicitor is a client whose human never answers: it holds each
// question until its request is cancelled or the test ends.
type hangingElicitor struct{ end chan struct{} }

func (e hangingElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	select {
	case <-ctx.Done():
	case <-e.end:
	}
	return nil, errors.New("nobody answered")
}

// Issue 19 §2: `serve --ask-timeout` bounds ask_user through elicitation
// over stdio, the issue's own case: on the earlier era a client that never
// answers gets the timeout at the configured time (it hung until the
// client gave up); on the multi round-trip era the server can answer only
// when the client comes back, so a client that answers late is told the
// question timed out at once, and its late answer is not taken. serve is
// a real process on real pipes, which no synctest bubble holds: the
// answer's text, not a measured duration, says the timeout ended the call
// (the test's own limit is a minute).
func TestAskTimeoutOverStdio(t *testing.T) {
	bin := testenv.Command(t)
	const timeout = time.Second
	for _, c := range []struct {
		version string
		late    time.Duration // 0: never answers
	}{{mcp.ProtocolVersion20250618, 0}, {mcp.ProtocolVersion20251125, 0}, {mcp.ProtocolVersion20260728, 3 * timeout}} {
		t.Run(c.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tr := transport.NewStdio(bin, os.Environ(), "serve", "--root", t.TempDir(), "--mode", "plan", "--ask-timeout", timeout.String(),
				"--without", "lsp,structural,code_graph")
			if err := tr.Start(ctx); err != nil {
				t.Fatal(err)
			}
			var h client.ElicitationHandler
			if c.late == 0 {
				end := make(chan struct{})
				defer close(end)
				h = hangingElicitor{end}
			} else {
				h = &slowElicitor{delay: c.late, calls: make(chan struct{}, 4)}
			}
			cl := client.NewClient(tr, client.WithElicitationHandler(h))
			defer cl.Close()
			if err := cl.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = c.version
			init.Params.ClientInfo = mcp.Implementation{Name: "timeout-test", Version: "1"}
			ir, err := cl.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if ir.ProtocolVersion != c.version {
				// serve's stdio refuses server/discover before initialize, so
				// a client of the multi round-trip era falls back.
				testenv.Unavailable(t, "MCP protocol "+c.version+" over serve's stdio", fmt.Errorf("serve negotiated %s", ir.ProtocolVersion))
			}
			text, isErr := callTool(t, cl, "ask_user", colour)
			if !isErr || !strings.Contains(text, "nobody answered within 1s") || !strings.Contains(text, "explicitly stated assumption") {
				t.Fatalf("(error=%v) %q", isErr, text)
			}
		})
	}
}
