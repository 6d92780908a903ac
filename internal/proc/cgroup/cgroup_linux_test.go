package cgroup

import (
	"os"
	"sync"
	"syscall"
	"testing"
)

// mountinfo escapes a space, tab, newline and backslash in a path as octal;
// anything else after a backslash is kept as it is.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/sys/fs/cgroup`:    "/sys/fs/cgroup",
		`/mnt/my\040cgroup`: "/mnt/my cgroup",
		`/a\011b\134c`:      "/a\tb\\c",
		`/odd\9`:            `/odd\9`,
		`/end\04`:           `/end\04`,
		`/not\999octal`:     `/not\999octal`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// A Children that has set up either has a folder or says why not, and a
// child's cgroup, made and not started in, goes.
func TestChildrenSetUp(t *testing.T) {
	var made string
	c := &Children{Owner: func() string { return "cgrouptest-0-0-1" }, Gone: func(string) bool { return false },
		Lock: new(sync.Mutex), Made: func(base string) { made = base }}
	ok, why := c.Containment()
	if !ok {
		if c.why == "" {
			t.Fatalf("no cgroups and no reason: %q", why)
		}
		t.Skip(why)
	}
	t.Cleanup(func() { endCgroups(c.base, true) })
	if made != c.base {
		t.Errorf("Made was told %q, the folder is %q", made, c.base)
	}
	var a syscall.SysProcAttr
	dir, done := c.Into(&a)
	if dir == "" || !a.UseCgroupFD {
		t.Fatalf("Into gave %q, UseCgroupFD %v", dir, a.UseCgroupFD)
	}
	done(false)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s stayed after a start that failed", dir)
	}
}
