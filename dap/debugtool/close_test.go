package debugtool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/dap/debugtool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Run.Close ends the session: the program and delve are gone; without a
// conversation id the run has no debug tool (DBG-1).
func TestRunCloseStopsTheSession(t *testing.T) {
	testenv.LookPath(t, "dlv")
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/busy\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nimport \"time\"\n\nfunc main() {\n\tfor {\n\t\ttime.Sleep(time.Millisecond)\n\t}\n}\n"), 0o644)
	run, err := builtintools.NewRun(builtintools.Options{Root: root, ConversationID: "c1", Without: []string{"lsp", "structural"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Call(context.Background(), tiers.Normal, "debug", json.RawMessage(`{"operation":"launch","program":".","timeout_seconds":1}`))
	if err != nil || res.IsError {
		t.Fatalf("launch: %v %s", err, registry.ResultText(res))
	}
	out := res.StructuredContent.(debugtool.DebugResult)
	pid := out.Stop.Session.PID
	if pid == 0 || !testenv.ProcessRunning(pid) {
		t.Fatalf("the program is not running: %+v", out.Stop.Session)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if !testenv.Exits(pid, 10*time.Second) {
		t.Fatal("the debugged program outlived Run.Close")
	}

	noConv, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"}})
	if err != nil {
		t.Fatal(err)
	}
	defer noConv.Close()
	for _, d := range noConv.Registered() {
		if d.Name == "debug" {
			t.Fatal("debug registered without a conversation id")
		}
	}
}
