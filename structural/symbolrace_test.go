package structural_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R1: edit_symbol took the definition's extent from the code graph before
// it took the file's lock, so an edit inside the body landing between the
// two moved the end and the splice kept part of the old body; in Python
// the result still parsed and was reported as "replaced function F". One
// caller replaces F while another inserts a line into it; after every
// round F must hold exactly one return line, and every replace reported
// as done must have left the F it reported.
const raceF = "def F():\n    return 0\n"

func symbolRaceCheck(t *testing.T, round int, got string) {
	t.Helper()
	if strings.Count(got, "return ") != 1 || !strings.HasPrefix(got, "def F():\n") {
		t.Fatalf("round %d: F is corrupted:\n%s", round, got)
	}
}

func TestEditSymbolDuringAParallelEdit(t *testing.T) {
	r := newRun(t, map[string]string{"m.py": raceF}, builtintools.Options{})
	path := filepath.Join(r.Root(), "m.py")
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	replaced := 0
	for round := range rounds {
		sym, edited := callPair(r, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace",
			"new_text": fmt.Sprintf("def F():\n    return %d", round+1)},
			"edit", map[string]any{"path": "m.py", "old_string": "def F():\n", "new_string": "def F():\n    y = 0000\n"})
		if edited.isErr {
			t.Fatalf("round %d: edit: %s", round, edited.text)
		}
		data, _ := os.ReadFile(path)
		symbolRaceCheck(t, round, string(data))
		if sym.isErr {
			if !strings.Contains(sym.text, "call edit_symbol again") {
				t.Fatalf("round %d: edit_symbol failed for another reason: %s", round, sym.text)
			}
			continue
		}
		replaced++
		checkReplaceDiff(t, round, sym.text)
	}
	t.Logf("%d rounds, %d replaced", rounds, replaced)
}

// R1 across processes: the test binary runs again as a second run over
// the same root that inserts lines into F while this one replaces it.
const symbolEditorEnv = "STRUCTURAL_TEST_SYMBOL_EDITOR" // root,count

func TestEditSymbolDuringAnotherProcessEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, map[string]string{"m.py": raceF}, builtintools.Options{})
	path := filepath.Join(r.Root(), "m.py")
	const rounds = 150
	cmd := exec.Command(exe, "-test.run=^TestSymbolEditorProcess$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", symbolEditorEnv, r.Root(), rounds))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	replaced := 0
	for round := range rounds {
		text, isErr := callAny(r, "edit_symbol", map[string]any{"symbol": "F", "operation": "replace",
			"new_text": fmt.Sprintf("def F():\n    return %d", round+1)})
		data, _ := os.ReadFile(path)
		got := string(data)
		if isErr {
			if !strings.Contains(text, "call edit_symbol again") {
				t.Fatalf("round %d: edit_symbol failed for another reason: %s", round, text)
			}
		} else {
			replaced++
			checkReplaceDiff(t, round, text)
		}
		// The other process only inserts y lines: F may have gained some
		// since, but never a second return.
		if strings.Count(got, "return ") != 1 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: F is corrupted (edit_symbol said: %s):\n%s", round, text, got)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("editor process: %v: %s", err, stderr.String())
	}
	var report struct{ Done, Failed int }
	for line := range strings.Lines(stdout.String()) {
		json.Unmarshal([]byte(line), &report)
	}
	symbolRaceCheck(t, rounds, testenv.ReadFile(t, path))
	t.Logf("%d replaces (%d done); the other process: %d edits done, %d refused", rounds, replaced, report.Done, report.Failed)
	if report.Done == 0 {
		t.Fatalf("the other process made no edit: %s", stdout.String())
	}
}

// checkReplaceDiff: a replace reported as done removed F's one return
// line and put in the new one.
func checkReplaceDiff(t *testing.T, round int, text string) {
	t.Helper()
	removed, added := 0, 0
	for l := range strings.Lines(text) {
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "-    return "):
			removed++
		case l == fmt.Sprintf("+    return %d", round+1):
			added++
		}
	}
	if !strings.HasPrefix(text, "replaced function F in m.py") || removed != 1 || added != 1 {
		t.Fatalf("round %d: the result does not describe a replace of F:\n%s", round, text)
	}
}

// TestSymbolEditorProcess is the other process of
// TestEditSymbolDuringAnotherProcessEdits: a run over the root that
// inserts a line into F, count times, and prints what it did.
func TestSymbolEditorProcess(t *testing.T) {
	spec := os.Getenv(symbolEditorEnv)
	if spec == "" {
		t.Skip("run by TestEditSymbolDuringAnotherProcessEdits")
	}
	root, n, _ := strings.Cut(spec, ",")
	count, _ := strconv.Atoi(n)
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var report struct{ Done, Failed int }
	for range count {
		if _, isErr := callAny(r, "edit", map[string]any{"path": "m.py", "old_string": "def F():\n", "new_string": "def F():\n    y = 0000\n"}); isErr {
			report.Failed++
		} else {
			report.Done++
		}
	}
	line, _ := json.Marshal(report)
	fmt.Println(string(line))
}
