package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// N2: another program (which takes no lock) replacing, creating or
// removing the file between the commit's last check and its rename must
// not be overwritten: the rename's victim is compared with what was read.
func TestRenameVictimIsTheFileRead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool
		change   Change
		other    func(path string) // what the other program does
		want     error
		after    string // the file's content afterwards ("" = absent)
	}{
		{"replaced", true, Change{Data: []byte("ours")}, func(p string) {
			os.WriteFile(p+".new", []byte("theirs"), 0o644)
			os.Rename(p+".new", p)
		}, ErrChanged, "theirs"},
		{"created", false, Change{Data: []byte("ours")}, func(p string) {
			os.WriteFile(p, []byte("theirs"), 0o644)
		}, ErrExists, "theirs"},
		{"replaced before a delete", true, Change{Delete: true}, func(p string) {
			os.WriteFile(p+".new", []byte("theirs"), 0o644)
			os.Rename(p+".new", p)
		}, ErrChanged, "theirs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := pathguard.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			p := filepath.Join(g.Root(), "f.txt")
			if tc.existing {
				os.WriteFile(p, []byte("read"), 0o644)
			}
			afterCheckForTest = func(string) { tc.other(p) }
			defer func() { afterCheckForTest = nil }()
			c := tc.change
			c.Path = p
			_, err = Write(g, c, Options{})
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrUnchanged) {
				t.Fatalf("Write: %v, want %v", err, tc.want)
			}
			if data, _ := os.ReadFile(p); string(data) != tc.after {
				t.Errorf("the file holds %q, want the other program's %q", data, tc.after)
			}
			names, _ := os.ReadDir(g.Root())
			for _, n := range names {
				if strings.Contains(n.Name(), ".tmp-") {
					t.Errorf("left %s", n.Name())
				}
			}
		})
	}
}
