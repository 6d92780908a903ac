package astedit

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// R17: a change staged from outside (an lsp_rename preview) that would
// make a file larger than the limit was refused in ast_edit's words ("the
// template's captures repeat too much text"). It is refused as a
// staged.TooLargeError, which says the sizes and which the caller tells
// as what the change is.
func TestStageChangeOverTheSizeLimit(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package a\n"})
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStager(newEngine(t))
	after := "package a\n" + strings.Repeat("x", MaxResultBytes)
	_, err = st.StageChange(g, staged.Change{Title: "rename x", Files: []staged.File{{File: "a.go", Path: filepath.Join(root, "a.go"),
		Before: []byte("package a\n"), After: []byte(after), Edits: 1, Lines: []int{1}}}})
	tl, ok := errors.AsType[*staged.TooLargeError](err)
	if !ok || tl.File != "a.go" || tl.Size != len(after) || tl.Limit != MaxResultBytes ||
		err.Error() != "nothing was staged: the change would make a.go 16777226 bytes long, over the limit of 16 MiB for one file an edit writes" {
		t.Fatalf("got %v", err)
	}
	if got := tl.Of(`renaming "x" to "y"`).Error(); got != `nothing was staged: renaming "x" to "y" would make a.go 16777226 bytes long, over the limit of 16 MiB for one file an edit writes` {
		t.Fatal(got)
	}
	if len(st.Pending()) != 0 {
		t.Fatal("staged anyway")
	}
}
