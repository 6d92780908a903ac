package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/conformance"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// golden is what each mode must list, from the conformance data.
func golden(t *testing.T) map[string][]string {
	t.Helper()
	e, err := conformance.Load(filepath.Join(testenv.ModuleRoot(), "conformance", "testdata", "tools.txtar"), builtintools.Families())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for mode, names := range e.Golden {
		out[string(mode)] = slices.Sorted(slices.Values(names))
	}
	return out
}

// The real MCP Inspector, in CLI mode, drives `builtin-tools serve` over
// stdio (CLI-1, REG-5, REG-6).
func inspector(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	insp := testenv.LookPath(t, "mcp-inspector")
	bin := testenv.Command(t)
	full := append([]string{"--cli", bin, "serve"}, args...)
	cmd := exec.Command(insp, full...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestInspectorListsEachMode(t *testing.T) {
	root := fixture(t)
	for mode, names := range golden(t) {
		out, errs, code := inspector(t, "--root", root, "--mode", mode, "--method", "tools/list", "--strict", "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s %s", mode, code, out, errs)
		}
		var res struct {
			Result struct {
				Tools []struct {
					Name        string         `json:"name"`
					Annotations map[string]any `json:"annotations"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v in %q", mode, err, out)
		}
		var got []string
		for _, tool := range res.Result.Tools {
			got = append(got, tool.Name)
			if tool.Annotations["readOnlyHint"] == nil || tool.Annotations["destructiveHint"] == nil {
				t.Errorf("%s: %s lacks explicit hints: %v", mode, tool.Name, tool.Annotations)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%s mode: the Inspector sees %v, want %v", mode, got, names)
		}
		if strings.Contains(errs, "warning") || strings.Contains(errs, "error") {
			t.Errorf("%s: --strict reports schema portability problems: %s", mode, errs)
		}
	}
}

func TestInspectorCallsRead(t *testing.T) {
	root := fixture(t)
	out, errs, code := inspector(t, "--root", root, "--method", "tools/call", "--tool-name", "read",
		"--tool-args-json", `{"path":"hello.txt"}`, "--format", "json")
	if code != 0 || !strings.Contains(out, `1\thello\n`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
}

func TestInspectorRefusedCalls(t *testing.T) {
	root := fixture(t)
	// Hidden in plan mode: the Inspector does not even find it.
	out, errs, code := inspector(t, "--root", root, "--mode", "plan", "--method", "tools/call", "--tool-name", "write",
		"--tool-args-json", `{"path":"x.txt","content":"y"}`, "--format", "json")
	if code == 0 || !strings.Contains(out+errs, "not found") {
		t.Fatalf("plan-mode write: exit %d: %s %s", code, out, errs)
	}
	// Refused by the approval policy, by the server, with a reason.
	out, errs, code = inspector(t, "--root", root, "--approve", "write=deny", "--method", "tools/call", "--tool-name", "write",
		"--tool-args-json", `{"path":"x.txt","content":"y"}`, "--format", "json")
	if code == 0 || !strings.Contains(out, "approval policy denies write tools") {
		t.Fatalf("denied write: exit %d: %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
		t.Fatal("a refused write changed the disk")
	}
	// The Inspector's CLI declares no elicitation, so ask_user fails at once.
	out, errs, code = inspector(t, "--root", root, "--method", "tools/call", "--tool-name", "ask_user",
		"--tool-args-json", `{"question":"Proceed?","allow_free_text":true}`, "--format", "json")
	if code == 0 || !strings.Contains(out, "did not declare the elicitation capability") {
		t.Fatalf("ask_user: exit %d: %s %s", code, out, errs)
	}
}

// The design card's third user: a developer inspects a harness's live run
// with the real Inspector, through Run.ServeDebug's socket and `attach`.
func TestInspectorAttachesToLiveRun(t *testing.T) {
	root := fixture(t)
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Ask: askuser.Elicitation{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sock, err := r.ServeDebug(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's folder: %v %v", fi.Mode(), err)
	}
	insp := testenv.LookPath(t, "mcp-inspector")
	bin := testenv.Command(t)
	// inspect runs the Inspector's CLI through attach; a failed call is a
	// non-zero exit with its error on stderr, returned after stdout.
	inspect := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(insp, append([]string{"--cli", bin, "attach", sock}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, out, errb.String())
		}
		if err != nil {
			return string(out) + errb.String()
		}
		return string(out)
	}
	out := inspect("--method", "tools/list", "--format", "json")
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	var got []string
	for _, tool := range list.Result.Tools {
		got = append(got, tool.Name)
	}
	slices.Sort(got)
	if want := golden(t)["readonly"]; !slices.Equal(got, want) {
		t.Fatalf("read-only by default: the Inspector sees %v, want %v", got, want)
	}
	// The harness writes through its own run; the Inspector reads it live.
	if res, err := r.Call(context.Background(), tiers.Normal, "write", json.RawMessage(`{"path":"live.txt","content":"from the harness\n"}`)); err != nil || res.IsError {
		t.Fatalf("harness write: %v %v", err, registry.ResultText(res))
	}
	out = inspect("--method", "tools/call", "--tool-name", "read", "--tool-args-json", `{"path":"live.txt"}`, "--format", "json")
	if !strings.Contains(out, "from the harness") {
		t.Fatalf("read through the socket: %s", out)
	}
	out = inspect("--method", "tools/call", "--tool-name", "write", "--tool-args-json", `{"path":"x.txt","content":"y"}`, "--format", "json")
	if !strings.Contains(out, "not found") {
		t.Fatalf("a write through a read-only socket: %s", out)
	}
	// One client at a time: a second is told so while the first is on, as
	// the answer to its own initialize, which the Inspector shows (issue 26;
	// an error with id null it would drop).
	first, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	first.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"first-client","version":"1"}}}` + "\n"))
	if line, err := bufio.NewReader(first).ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("first client: %q %v", line, err)
	}
	out = inspect("--method", "tools/list", "--format", "json")
	if !strings.Contains(out, "another client is attached") || !strings.Contains(out, "first-client 1") {
		t.Fatalf("the Inspector as a second client: %s", out)
	}
	first.Close()
	// The socket goes with the run.
	r.Close()
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived its run: %v", err)
	}
}
