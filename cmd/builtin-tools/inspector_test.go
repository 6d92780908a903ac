package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/conformance"
	"github.com/builtin-tools/builtin-tools/internal/testenv"
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
