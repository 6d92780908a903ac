package unidiff_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/files/unidiff"
)

// A traditional file's names are kept as its ---/+++ lines write them,
// which gitdiff's one name cannot tell apart; a git file's are not needed.
func TestParseKeepsRawNames(t *testing.T) {
	patch := "diff --git a/g.txt b/g.txt\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-x\n+y\n" +
		"--- b/t.txt\t2024-01-01 00:00:00\n+++ b/t.txt\n@@ -1 +1 @@\n-x\n+y\n"
	files, err := unidiff.Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2", len(files))
	}
	if !files[0].Git || files[0].Raw != [2]string{"a/g.txt", "b/g.txt"} {
		t.Errorf("git file: Git %v, Raw %q", files[0].Git, files[0].Raw)
	}
	if files[1].Git || files[1].Raw != [2]string{"b/t.txt", "b/t.txt"} {
		t.Errorf("traditional file: Git %v, Raw %q", files[1].Git, files[1].Raw)
	}
}

// A traditional a/ is a prefix unless only the name with it exists; a name
// an earlier section creates counts as existing.
func TestSectionsReadPrefixes(t *testing.T) {
	patch := "--- /dev/null\n+++ b/a/new.txt\n@@ -0,0 +1 @@\n+n\n" +
		"--- a/a/new.txt\n+++ b/a/new.txt\n@@ -1 +1 @@\n-n\n+m\n" +
		"--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n"
	files, err := unidiff.Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{"x.txt": true}
	secs, err := unidiff.Sections(files, func(name string) (string, error) { return name, nil }, func(p string) bool { return onDisk[p] })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range secs {
		got = append(got, s.OldName+">"+s.NewName)
	}
	if want := []string{">a/new.txt", "a/new.txt>a/new.txt", "x.txt>x.txt"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// A symbolic link in a patch is refused before anything is read.
func TestSectionsRefuseLinks(t *testing.T) {
	files, err := unidiff.Parse("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = unidiff.Sections(files, func(name string) (string, error) { return name, nil }, func(string) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v, want a refusal of the link", err)
	}
}

// A hunk is placed by its context at the nearest offset, an added line
// takes the end of the line it replaces, and a hunk found nowhere says
// where it was looked for.
func TestApply(t *testing.T) {
	lines := unidiff.SplitLines("a\r\nb\r\nc\nd\n")
	files, err := unidiff.Parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n b\n-c\n+C\n")
	if err != nil {
		t.Fatal(err)
	}
	out, off, err := unidiff.Apply(slices.Clone(lines), files[0].TextFragments[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := unidiff.JoinLines(out), "a\r\nb\r\nC\nd\n"; got != want || off != 1 {
		t.Errorf("got %q at offset %d, want %q at 1", got, off, want)
	}
	files, err = unidiff.Parse("--- a/f\n+++ b/f\n@@ -3,1 +3,1 @@\n-z\n+Z\n")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = unidiff.Apply(lines, files[0].TextFragments[0], 0)
	m, ok := errors.AsType[*unidiff.Mismatch](err)
	if !ok || m.Want != 2 || !slices.Equal(m.Old, []string{"z\n"}) {
		t.Fatalf("err = %#v, want a mismatch of z at line index 2", err)
	}
}

// Any patch applied to any text never panics, and splitting and joining
// a text's lines gives it back.
func FuzzApply(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+x\n b\n", "a\r\nb")
	f.Add("--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+n\n", "")
	f.Fuzz(func(t *testing.T, patch, text string) {
		if text != "" {
			if got := unidiff.JoinLines(unidiff.SplitLines(text)); got != text {
				t.Fatalf("split and join gave %q for %q", got, text)
			}
		}
		files, err := unidiff.Parse(patch)
		if err != nil {
			return
		}
		for _, pf := range files {
			lines, shift := unidiff.SplitLines(text), 0
			for _, frag := range pf.TextFragments {
				out, _, err := unidiff.Apply(lines, frag, shift)
				if err != nil {
					break
				}
				shift += int(frag.NewLines - frag.OldLines)
				lines = out
			}
		}
	})
}
