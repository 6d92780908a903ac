package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// D11: file metadata across a one-character edit.
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
	r := edit("suid.sh")
	c.line("setuid 4755 file: mode after edit", modeOf(p("suid.sh"))+" ("+r.summary(60)+")", "0755")
	r = edit("sgid.sh")
	c.line("setgid 2775 file: mode after edit", modeOf(p("sgid.sh"))+" ("+r.summary(60)+")", "0775")
	r = edit("owned.txt")
	c.line("nobody:nogroup 0640 file edited by root: owner after", ownerOf(p("owned.txt"))+" "+modeOf(p("owned.txt"))+" ("+r.summary(60)+")", "0:0 (root:root) 0640")
	if xerr != nil {
		c.line("user.tag xattr after edit", "setxattr failed here: "+xerr.Error(), "dropped")
	} else {
		r = edit("xattr.txt")
		buf := make([]byte, 64)
		n, err := unix.Getxattr(p("xattr.txt"), "user.tag", buf)
		got := "gone (" + fmt.Sprint(err) + ")"
		if err == nil {
			got = fmt.Sprintf("kept (%q)", buf[:n])
		}
		c.line("user.tag xattr after edit", got+" ("+r.summary(60)+")", "dropped")
	}
	ino := inode(p("hard.txt"))
	r = edit("hard.txt")
	c.line("hard-linked file (expect refusal): answer; inode kept; other link's content",
		fmt.Sprintf("%s; inode kept: %s; hard2.txt: %q", r.summary(170), yesNo(inode(p("hard.txt")) == ino), readFile(p("hard2.txt"))),
		"edited: new inode, other link keeps the old content, not reported")
	r = edit("ro.txt")
	c.line("0444 file (expect refusal): answer; content", fmt.Sprintf("%s; content %q", r.summary(170), readFile(p("ro.txt"))),
		"silently rewritten (mode stays 0444), also as nobody")
	s.close()

	// A new file written by a server started under umask 077.
	old := syscall.Umask(0o077)
	s2, err := c.startServe(root, nil, "--without", "lsp")
	syscall.Umask(old)
	check(err)
	check(s2.initialize())
	r = s2.tool("write", map[string]any{"path": "new.txt", "content": "new\n"})
	s2.close()
	c.line("new file written under umask 077: mode", modeOf(p("new.txt"))+" ("+r.summary(60)+")", "0644")
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
