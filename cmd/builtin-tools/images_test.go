package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var onePixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// D5: without --out, images go to a fresh private folder, never into the
// current folder; a link planted where the image would go is not followed
// and an existing file is never overwritten.
func TestCallImagesNeverOverwrite(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "evil.png"), onePixel, 0o644)
	victim := filepath.Join(parent, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	if err := os.Symlink(victim, filepath.Join(root, "read-1.png")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "call", "--mode", "readonly", "--root", root, "read", `{"path":"evil.png"}`)
	os.Chdir(wd)
	if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
		t.Fatalf("the file a planted link named was overwritten: %q", data)
	}
	m := regexp.MustCompile(`written to (\S+)\]`).FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.HasPrefix(m[1], root) || !filepath.IsAbs(m[1]) {
		t.Errorf("image written to %s, want a fresh folder outside the root", m[1])
	}
	if got, err := os.ReadFile(m[1]); err != nil || !bytes.Equal(got, onePixel) {
		t.Errorf("image file %s: %v", m[1], err)
	}
	os.RemoveAll(filepath.Dir(m[1]))

	// With --out, an existing name gets a fresh one beside it.
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "read-1.png"), []byte("mine"), 0o644)
	code, stdout, _ = runCmd(t, "", "call", "--root", root, "--out", out, "read", `{"path":"evil.png"}`)
	if data, _ := os.ReadFile(filepath.Join(out, "read-1.png")); string(data) != "mine" {
		t.Fatalf("--out: an existing file was overwritten")
	}
	if code != 0 || !strings.Contains(stdout, "written to "+out) {
		t.Fatalf("--out: code %d %s", code, stdout)
	}
}
