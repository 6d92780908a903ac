package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// runCmd runs the command in process and returns exit code, stdout, stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello\nworld\n"), 0o644)
	return root
}

// CLI-1: tools lists what a mode sees, one name<TAB>tier line each.
func TestToolsPerMode(t *testing.T) {
	root := fixture(t)
	code, out, _ := runCmd(t, "", "tools", "--root", root, "--mode", "plan")
	want := ""
	for _, name := range golden(t)["plan"] {
		want += name + "\tread\n"
	}
	if code != 0 || out != want {
		t.Fatalf("plan: code %d, %q, want %q", code, out, want)
	}
	code, out, _ = runCmd(t, "", "tools", "--root", root)
	if code != 0 || !strings.Contains(out, "write\twrite\n") || !strings.Contains(out, "apply_patch\twrite\n") {
		t.Fatalf("normal: code %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "tools", "--root", root, "--json", "--mode", "readonly", "--without", "ask,lsp,structural,code_graph")
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Tools) != 1 || list.Tools[0].Name != "read" {
		t.Fatalf("json: code %d, %q", code, out)
	}
	// A misspelt family is an error naming the valid ones, not ignored.
	code, _, errOut := runCmd(t, "", "tools", "--root", root, "--without", "lps")
	if code == 0 || !strings.Contains(errOut, `unknown family "lps"`) || !strings.Contains(errOut, "files, ask, lsp, structural") {
		t.Fatalf("--without lps: code %d, %q", code, errOut)
	}
}

// CLI-1: call runs one call; plan mode refuses write by name (exit 1).
func TestCall(t *testing.T) {
	root := fixture(t)
	code, out, _ := runCmd(t, "", "call", "--json", "--root", root, "read", `{"path":"hello.txt"}`)
	var data struct {
		Path       string `json:"path"`
		TotalLines int    `json:"total_lines"`
		Content    string `json:"content"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &data) != nil || data.Path != "hello.txt" || data.TotalLines != 2 || data.Content != "hello\nworld\n" {
		t.Fatalf("call --json: code %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--root", root, "read", `{"path":"hello.txt"}`)
	if code != 0 || !strings.Contains(out, "     1\thello\n     2\tworld") {
		t.Fatalf("read: code %d, %q", code, out)
	}
	code, out, errs := runCmd(t, "", "call", "--root", root, "--mode", "plan", "write", `{"path":"new.txt","content":"x"}`)
	if code != 1 || !strings.Contains(out, "not available in plan mode") {
		t.Fatalf("plan write: code %d, out %q, err %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
		t.Fatal("plan-mode write created the file")
	}
	code, out, _ = runCmd(t, `{"path":"new.txt","content":"from stdin\n"}`, "call", "--root", root, "write", "-")
	if code != 0 || !strings.Contains(out, "created new.txt") {
		t.Fatalf("write from stdin: code %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--root", root, "read", `{"path":"../etc/passwd"}`)
	if code != 1 || !strings.Contains(out, "outside the root") {
		t.Fatalf("escape: code %d, %q", code, out)
	}
}

// Images in a result are written to files the output names.
func TestCallWritesImages(t *testing.T) {
	root := fixture(t)
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	os.WriteFile(filepath.Join(root, "dot.png"), png, 0o644)
	out := t.TempDir()
	code, stdout, _ := runCmd(t, "", "call", "--root", root, "--out", out, "read", `{"path":"dot.png"}`)
	want := filepath.Join(out, "read-1.png")
	if code != 0 || !strings.Contains(stdout, "[image image/png written to "+want+"]") {
		t.Fatalf("code %d, %q", code, stdout)
	}
	got, err := os.ReadFile(want)
	if err != nil || !bytes.Equal(got, png) {
		t.Fatalf("image file: %v", err)
	}
}

// Bad usage exits 2 and says what is wrong.
func TestUsageErrors(t *testing.T) {
	root := fixture(t)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"call", "--root", root}, "want TOOL"},
		{[]string{"call", "--root", root, "read", "not json"}, "must be a JSON object"},
		{[]string{"call", "--root", root, "read", "[1]"}, "must be a JSON object"},
		{[]string{"tools", "--mode", "god"}, `unknown mode "god"`},
		{[]string{"serve", "--root", root, "--approve", "write=maybe"}, "not allow, ask or deny"},
		{[]string{"serve", "--root", filepath.Join(root, "missing")}, "missing"},
		{[]string{"tools", "--ask", "carrier-pigeon"}, "use elicit, terminal or none"},
		{[]string{"serve", "extra"}, "unexpected argument"},
	}
	for _, tc := range cases {
		code, _, errs := runCmd(t, "", tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	for _, cmd := range []string{"serve", "tools", "call"} {
		code, _, errs := runCmd(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(errs, "Usage: builtin-tools "+cmd) || !strings.Contains(errs, "-root") {
			t.Errorf("%s --help: code %d, %q", cmd, code, errs)
		}
	}
	if code, out, _ := runCmd(t, "", "version"); code != 0 || !strings.HasPrefix(out, "builtin-tools ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// After the README's install step the seed's Dart example needs no flag:
// the per-user grammar folder is the default, and the install puts the
// Dart grammar there.
func TestDartGrammarByDefault(t *testing.T) {
	dir := defaultGrammars()
	if _, err := os.Stat(filepath.Join(dir, "libtree-sitter-dart.so")); dir == "" || err != nil {
		testenv.Missing(t, "the Dart grammar in the per-user grammar folder", "scripts/install-astgrep.sh puts it there")
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "main.dart"), []byte("void main() {\n  print('hello');\n}\n"), 0o644)
	code, out, errs := runCmd(t, "", "call", "--root", root, "ast_grep", `{"pattern": "print($A)", "language": "dart"}`)
	if code != 0 || !strings.Contains(out, "main.dart:2") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
}

// N3: write tools refuse .git/ unless --allow-git-writes, and with it a
// hook still needs exec approval.
func TestCallAllowGitWrites(t *testing.T) {
	root := fixture(t)
	hook := `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\n"}`
	code, out, _ := runCmd(t, "", "call", "--root", root, "write", hook)
	if code != 1 || !strings.Contains(out, "--allow-git-writes") {
		t.Fatalf("without the flag: code %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--root", root, "--allow-git-writes", "--approve", "exec=deny", "write", hook)
	if code != 1 || !strings.Contains(out, "exec=deny") {
		t.Fatalf("with the flag, exec=deny: code %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--root", root, "--allow-git-writes", "write", hook)
	if code != 0 || !strings.Contains(out, "created .git/hooks/pre-commit") {
		t.Fatalf("with the flag: code %d, %q", code, out)
	}
}
