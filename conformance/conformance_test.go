package conformance_test

import (
	"context"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/conformance"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden mode sections of testdata/tools.txtar")

func expectations(t *testing.T) *conformance.Expectations {
	t.Helper()
	e, err := conformance.Load("testdata/tools.txtar", builtintools.Families())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// inProcess reaches the run through mcp-go's in-process client, as a
// harness linking the library does.
var inProcess = conformance.Target{
	Name: "inprocess",
	Connect: func(t *testing.T, mode tiers.Mode, without []string) conformance.Peer {
		t.Helper()
		return inProcessPeer(t, mode, builtintools.Options{Root: t.TempDir(), ConversationID: "conformance", Ask: declineAll, Without: without})
	},
}

// declineAll is a human who declines every question.
var declineAll = askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
	return askuser.Answer{Outcome: askuser.Declined}, nil
})

// inProcessPeer is a client in mode of a run made with opts, closed with
// the test.
func inProcessPeer(t *testing.T, mode tiers.Mode, opts builtintools.Options) conformance.Peer {
	t.Helper()
	run, err := builtintools.NewRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	c, err := run.Client(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	return conformance.ClientPeer(c)
}

func init() {
	inProcess.Budget = func(t *testing.T, root string, budget int) conformance.Peer {
		t.Helper()
		return inProcessPeer(t, tiers.Normal, builtintools.Options{Root: root, ConversationID: "conformance", OutputBudget: budget, Ask: declineAll})
	}
	stdio.Budget = func(t *testing.T, root string, budget int) conformance.Peer {
		t.Helper()
		return stdioPeer(t, "serve", "--root", root, "--conversation", "conformance", "--output-budget", strconv.Itoa(budget), "--lsp-broker=false")
	}
	inProcess.Vibe = func(t *testing.T, mode tiers.Mode, root string, commands map[string]string) conformance.Peer {
		t.Helper()
		return inProcessPeer(t, mode, builtintools.Options{Root: root, ConversationID: "conformance",
			Without:  []string{"lsp", "code_graph"},
			Settings: map[string]any{"vibe": vibetool.Config{On: true, Commands: commands, StateDir: t.TempDir()}}})
	}
	stdio.Vibe = func(t *testing.T, mode tiers.Mode, root string, commands map[string]string) conformance.Peer {
		t.Helper()
		args := []string{"serve", "--root", root, "--mode", string(mode), "--without", "lsp,code_graph", "--vibe", "--vibe-state", t.TempDir()}
		for k, v := range commands {
			args = append(args, "--worker-command", k+"="+v)
		}
		return stdioPeer(t, args...)
	}
}

// stdioPeer starts `builtin-tools ARGS` and initializes an MCP client on it.
func stdioPeer(t *testing.T, args ...string) conformance.Peer {
	t.Helper()
	c, err := client.NewStdioMCPClient(testenv.Command(t), os.Environ(), args...)
	if err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "conformance", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return conformance.ClientPeer(c)
}

// stdio reaches the run through the real command, `builtin-tools serve`.
var stdio = conformance.Target{
	Name: "stdio",
	Connect: func(t *testing.T, mode tiers.Mode, without []string) conformance.Peer {
		t.Helper()
		return stdioPeer(t, "serve", "--root", t.TempDir(), "--mode", string(mode), "--without", strings.Join(without, ","))
	},
}

// CONF-1 over the in-process pipe.
func TestConformanceInProcess(t *testing.T) {
	target := inProcess
	target.Update = *update
	conformance.Run(t, target, expectations(t))
}

// CONF-1 over stdio, against the real command. Under -update the
// in-process run above rewrote the golden lists; stdio is checked against
// them rather than writing them again.
func TestConformanceStdio(t *testing.T) {
	conformance.Run(t, stdio, expectations(t))
}

// The embedded data a harness outside this module uses parses against the
// module's families and passes over the in-process pipe.
func TestBuiltinData(t *testing.T) {
	b, err := conformance.Builtin(builtintools.Families())
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, inProcess, b)
}
