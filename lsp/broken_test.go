package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
)

// brokenBin writes a program that records each run in count and fails the
// way rustup's rust-analyzer proxy does without the component: one line
// that says why, then a backtrace.
func brokenBin(t *testing.T, count string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rust-analyzer")
	var trace strings.Builder
	for i := 0; i < 15; i++ {
		fmt.Fprintf(&trace, "  %d: rustup::frame_%d\\n", i, i)
	}
	script := fmt.Sprintf("#!/bin/sh\necho run >> %s\nprintf \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable-x86_64-unknown-linux-gnu'.\\n\\nStack backtrace:\\n%s\" >&2\nexit 1\n", count, trace.String())
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func rustRoot(t *testing.T) string {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "Cargo.toml"), []byte("[package]\nname = \"x\"\nversion = \"0.1.0\"\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "main.rs"), []byte("fn main() {}\n"), 0o644)
	return root
}

func runs(count string) int {
	data, _ := os.ReadFile(count)
	return strings.Count(string(data), "run")
}

// A binary that resolves but does not run is not "available": status and
// the first write say why in one line and what to do; later writes say
// nothing and run nothing.
func TestInstalledButBrokenServer(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	spec := langserver.Spec{ID: "rust-analyzer", Language: "Rust", Command: []string{brokenBin(t, count)}, Probe: []string{"--version"},
		Install: "rustup component add rust-analyzer", RootMarkers: []string{"Cargo.toml"}, Extensions: map[string]string{".rs": "rust"}}
	root := rustRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}})
	defer sup.Close()
	ctx := context.Background()
	row := statusRow(t, sup.Status(ctx), "rust-analyzer")
	t.Logf("status: %+v", row)
	if row.State != answer.StateBroken || row.Install != "rustup component add rust-analyzer" {
		t.Errorf("status: want rust-analyzer broken, with how to install it; got %+v", row)
	}
	expectContains(t, "status", row.RunError, "error: Unknown binary 'rust-analyzer'")
	if strings.Contains(row.RunError, "backtrace") || strings.Contains(row.RunError, "frame_") {
		t.Errorf("status quotes the backtrace: %s", row.RunError)
	}
	main := filepath.Join(root, "src", "main.rs")
	_, err := sup.AfterWrite(ctx, loc(t, sup, main))
	if err == nil || !strings.Contains(err.Error(), "Unknown binary") || !strings.Contains(err.Error(), "rustup component add") || strings.Contains(err.Error(), "frame_") {
		t.Fatalf("first write: %v", err)
	}
	for i := 0; i < 5; i++ {
		if diags, err := sup.AfterWrite(ctx, loc(t, sup, main)); err != nil || diags != nil {
			t.Fatalf("write %d after the first: %v %v, want nothing", i+2, diags, err)
		}
	}
	if n := runs(count); n != 1 {
		t.Errorf("the broken binary ran %d times, want once (the probe)", n)
	}
}

// A server that fails to start is not started again on every write: the
// failure is reported once, then backed off until reload.
func TestStartFailureBacksOff(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	bin := filepath.Join(t.TempDir(), "dies")
	os.WriteFile(bin, []byte("#!/bin/sh\necho run >> "+count+"\necho 'fatal: the index is corrupt' >&2\necho 'more noise' >&2\nexit 1\n"), 0o755)
	spec := langserver.Spec{ID: "dies", Language: "Rust", Command: []string{bin}, Install: "reinstall it",
		RootMarkers: []string{"Cargo.toml"}, Extensions: map[string]string{".rs": "rust"}}
	root := rustRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, StartTimeout: 10 * time.Second})
	defer sup.Close()
	ctx := context.Background()
	main := filepath.Join(root, "src", "main.rs")
	_, err := sup.AfterWrite(ctx, loc(t, sup, main))
	if err == nil || !strings.Contains(err.Error(), "fatal: the index is corrupt") {
		t.Fatalf("first write: %v", err)
	}
	for i := 0; i < 5; i++ {
		if _, err := sup.AfterWrite(ctx, loc(t, sup, main)); err != nil {
			t.Fatalf("write during the backoff: %v", err)
		}
	}
	if n := runs(count); n != 1 {
		t.Errorf("started %d times during the backoff, want once", n)
	}
	fails := statusRow(t, sup.Status(ctx), "dies").StartFailures
	if len(fails) != 1 || fails[0].Root != "." || !fails[0].RetryAt.After(time.Now()) {
		t.Errorf("status: want one start failure for ., retried later; got %+v", fails)
	} else {
		expectContains(t, "start failure", fails[0].Error, "fatal: the index is corrupt")
	}
	if _, err := sup.Reload(ctx, loc(t, sup, main)); err == nil {
		t.Fatal("reload of a server that cannot start succeeded")
	}
	if n := runs(count); n != 2 {
		t.Errorf("reload did not retry at once: %d starts", n)
	}
}

// The real case, where the machine has rustup's proxy but no component.
func TestRustupProxyWithoutComponent(t *testing.T) {
	t.Parallel()
	bin := testenv.LookPath(t, "rust-analyzer")
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err == nil {
		t.Logf("rust-analyzer runs here (%s); the broken case is covered by TestInstalledButBrokenServer", strings.TrimSpace(string(out)))
		return
	}
	sup := NewSupervisor(rustRoot(t), Config{})
	defer sup.Close()
	row := statusRow(t, sup.Status(context.Background()), "rust-analyzer")
	t.Logf("status: %+v", row)
	if row.State != answer.StateBroken || row.RunError == "" || !strings.Contains(row.Install, "rustup component add rust-analyzer") {
		t.Errorf("status: want rust-analyzer broken, with how to install it; got %+v", row)
	}
	if strings.Contains(row.RunError, "Stack backtrace") {
		t.Errorf("status quotes the backtrace: %s", row.RunError)
	}
}
