//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// D11: file metadata survives a one-character edit; hard-linked and
// read-only files are refused; new files follow the umask.
func TestD11(t *testing.T) { runCase(t, "D11", caseD11) }

func caseD11(c *cx) {
	root := c.root
	p := func(name string) string { return filepath.Join(root, name) }
	mk := func(name string, mode uint32) {
		writeFile(p(name), "value a\n")
		check(unix.Chmod(p(name), mode))
	}
	mk("suid.sh", 0o4755)
	mk("sgid.sh", 0o2775)
	mk("owned.txt", 0o640)
	check(os.Lchown(p("owned.txt"), 65534, 65534))
	mk("xattr.txt", 0o644)
	xerr := unix.Setxattr(p("xattr.txt"), "user.tag", []byte("hello"), 0)
	mk("hard.txt", 0o644)
	check(os.Link(p("hard.txt"), p("hard2.txt")))
	mk("ro.txt", 0o444)

	s := c.serve(root, "--without", "lsp")
	edit := func(name string) toolResult {
		return s.tool("edit", map[string]any{"path": name, "old_string": "value a", "new_string": "value b"})
	}
	c.sub("setuid", func(c *cx) {
		r := edit("suid.sh")
		c.line("setuid 4755 file: mode after edit", modeOf(p("suid.sh"))+" ("+r.summary(60)+")", "0755")
		c.want(r.ok() && modeOf(p("suid.sh")) == "4755", "edited, mode 4755 kept")
	})
	c.sub("setgid", func(c *cx) {
		r := edit("sgid.sh")
		c.line("setgid 2775 file: mode after edit", modeOf(p("sgid.sh"))+" ("+r.summary(60)+")", "0775")
		c.want(r.ok() && modeOf(p("sgid.sh")) == "2775", "edited, mode 2775 kept")
	})
	c.sub("owner", func(c *cx) {
		r := edit("owned.txt")
		c.line("nobody:nogroup 0640 file edited by root: owner after", ownerOf(p("owned.txt"))+" "+modeOf(p("owned.txt"))+" ("+r.summary(60)+")", "0:0 (root:root) 0640")
		c.want(r.ok() && ownerOf(p("owned.txt")) == "65534:65534" && modeOf(p("owned.txt")) == "0640", "edited, owner 65534:65534 and mode 0640 kept")
	})
	c.sub("xattr", func(c *cx) {
		if xerr != nil {
			c.line("user.tag xattr after edit", "setxattr failed here: "+xerr.Error(), "dropped")
			c.lacks("no user xattrs on this file system (%v)", xerr)
		}
		r := edit("xattr.txt")
		buf := make([]byte, 64)
		n, err := unix.Getxattr(p("xattr.txt"), "user.tag", buf)
		got := "gone (" + fmt.Sprint(err) + ")"
		if err == nil {
			got = fmt.Sprintf("kept (%q)", buf[:n])
		}
		c.line("user.tag xattr after edit", got+" ("+r.summary(60)+")", "dropped")
		c.want(r.ok() && err == nil && string(buf[:n]) == "hello", "edited, the xattr kept")
	})
	c.sub("hard link", func(c *cx) {
		ino := inode(p("hard.txt"))
		r := edit("hard.txt")
		kept := inode(p("hard.txt")) == ino
		c.line("hard-linked file (expect refusal): answer; inode kept; other link's content",
			fmt.Sprintf("%s; inode kept: %s; hard2.txt: %q", r.summary(170), yesNo(kept), readFile(p("hard2.txt"))),
			"edited: new inode, other link keeps the old content, not reported")
		c.want(r.err == nil && r.isError && kept && readFile(p("hard.txt")) == "value a\n", "refused without force, nothing changed")
	})
	c.sub("read-only", func(c *cx) {
		r := edit("ro.txt")
		c.line("0444 file (expect refusal): answer; content", fmt.Sprintf("%s; content %q", r.summary(170), readFile(p("ro.txt"))),
			"silently rewritten (mode stays 0444), also as nobody")
		c.want(r.err == nil && r.isError && readFile(p("ro.txt")) == "value a\n", "refused without force, content unchanged")
	})
	s.close()

	// A new file written by a server started under umask 077.
	c.sub("umask", func(c *cx) {
		old := syscall.Umask(0o077)
		s2, err := c.startServe(root, nil, "--without", "lsp")
		syscall.Umask(old)
		check(err)
		check(s2.initialize())
		r := s2.tool("write", map[string]any{"path": "new.txt", "content": "new\n"})
		s2.close()
		c.line("new file written under umask 077: mode", modeOf(p("new.txt"))+" ("+r.summary(60)+")", "0644")
		c.want(r.ok() && modeOf(p("new.txt")) == "0600", "written with mode 0600")
	})
}

func modeOf(path string) string {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%04o", st.Mode&0o7777)
}

func ownerOf(path string) string {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
}

func inode(path string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0
	}
	return st.Ino
}
