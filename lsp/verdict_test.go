package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
)

// WRT-4: a write no server checks says why, on every write, in a verdict
// that tells it from "checked, clean": no server for the kind of file, no
// root marker, an installed binary that does not run, a start that failed
// (and its backoff, which starts nothing).
func TestCheckWrittenStates(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	broken := langserver.Spec{ID: "rust-analyzer", Language: "Rust", Command: []string{brokenBin(t, count)}, Probe: []string{"--version"},
		Install: "rustup component add rust-analyzer", RootMarkers: []string{"Cargo.toml"}, Extensions: map[string]string{".rs": "rust"}}
	dies := filepath.Join(t.TempDir(), "dies")
	os.WriteFile(dies, []byte("#!/bin/sh\necho 'fatal: the index is corrupt' >&2\nexit 1\n"), 0o755)
	failing := langserver.Spec{ID: "dies", Language: "Fake", Command: []string{dies}, Install: "reinstall it",
		RootMarkers: []string{"fake.toml"}, Extensions: map[string]string{".fake": "fake"}}
	root := rustRoot(t)
	os.WriteFile(filepath.Join(root, "fake.toml"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "a.fake"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# x\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "other"), 0o755)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{broken, failing,
		{ID: "nomark", Command: []string{"sh"}, RootMarkers: []string{"nomark.json"}, Extensions: map[string]string{".nm": "nm"}}},
		StartTimeout: 10 * time.Second})
	defer sup.Close()
	os.WriteFile(filepath.Join(root, "other", "b.nm"), []byte("x\n"), 0o644)
	ctx := context.Background()

	check := func(rel string) diag.WriteCheck {
		t.Helper()
		wc, err := sup.CheckWritten(ctx, loc(t, sup, filepath.Join(root, rel)), false)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if wc.New == nil || wc.Fixed == nil || wc.Late != nil {
			t.Errorf("%s: new and fixed must be lists, late nil: %+v", rel, wc)
		}
		return wc
	}
	expect := func(rel string, wc diag.WriteCheck, server string, state diag.State, why ...string) {
		t.Helper()
		if wc.File != rel || wc.Server != server || wc.State != state || wc.Version != 0 {
			t.Errorf("%s: want %s from %q; got %+v", rel, state, server, wc.Verdict)
		}
		expectContains(t, rel+" why", wc.Why, why...)
	}
	expect("README.md", check("README.md"), "", diag.NoServer, "no language server handles .md files")
	wc := check("other/b.nm")
	expect("other/b.nm", wc, "", diag.NoServer, "nomark is installed but no root marker (nomark.json) was found in other")
	for i := range 3 {
		wc := check("src/main.rs")
		expect("src/main.rs", wc, "rust-analyzer", diag.ServerFailed, "Unknown binary 'rust-analyzer'", "rustup component add rust-analyzer")
		if strings.Contains(wc.Why, "frame_") {
			t.Errorf("write %d: the why quotes the backtrace: %s", i+1, wc.Why)
		}
	}
	if n := runs(count); n != 1 {
		t.Errorf("the broken binary ran %d times, want once (the probe)", n)
	}
	expect("a.fake", check("a.fake"), "dies", diag.ServerFailed, "fatal: the index is corrupt")
	expect("a.fake", check("a.fake"), "dies", diag.ServerFailed, "fatal: the index is corrupt", "retr")
}
