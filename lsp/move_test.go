package lsp

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/wsedit"
)

// Issue 19 §4: a file a rename moves (a server's rename-file operation)
// got the umask's mode instead of its source's; it keeps its mode, special
// bits included, and its owner and group, as every other write does.
func TestMovedFileKeepsModeAndOwner(t *testing.T) {
	root := t.TempDir()
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	uri := func(name string) string { return protocol.FileURI(filepath.Join(root, name)) }
	type file struct {
		mode     fs.FileMode
		uid, gid int // -1: ours
	}
	cases := map[string]file{
		"secret": {0o600, -1, -1},
		"script": {0o755, -1, -1},
		"odd":    {0o640 | fs.ModeSetgid, -1, -1},
	}
	if os.Geteuid() == 0 {
		cases["theirs"] = file{0o664, 4321, 4322}
	}
	var changes []json.RawMessage
	for name, f := range cases {
		p := filepath.Join(root, name+".txt")
		if err := os.WriteFile(p, []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.uid >= 0 {
			if err := os.Lchown(p, f.uid, f.gid); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"kind": "rename", "oldUri": uri(name + ".txt"), "newUri": uri("moved/" + name + ".txt")})
		changes = append(changes, b)
	}
	plan, err := planEdit(sup.co, &protocol.WorkspaceEdit{DocumentChanges: changes}, nil)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := wsedit.Commit(context.Background(), sup.co, plan, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("notes: %v", notes)
	}
	for name, f := range cases {
		info, err := os.Lstat(filepath.Join(root, "moved", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode() &^ fs.ModeType; got != f.mode {
			t.Errorf("%s: moved with mode %v, want %v", name, got, f.mode)
		}
		st := info.Sys().(*syscall.Stat_t)
		uid, gid := f.uid, f.gid
		if uid < 0 {
			uid, gid = os.Geteuid(), os.Getegid()
		}
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s: moved owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, uid, gid)
		}
	}
}
