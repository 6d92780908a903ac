//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// R10: `debug launch` with core checked the core's path through the guard,
// and the adapter opened the path later: a process flipping the name
// between a hard link of the real core and a link to a core outside the
// root had the outside core read (10 of 60 launches showed its value).
// The adapter now opens the file checked.
func TestR10(t *testing.T) { runCase(t, "R10", caseR10) }

const r10Source = `#include <stdlib.h>

int depth(int n, int secret) {
	int *p = 0;
	if (n == 0) {
		*p = secret;
	}
	return depth(n - 1, secret) + 1;
}

int main(int argc, char **argv) {
	int secret = argc > 1 ? atoi(argv[1]) : 111;
	return depth(3, secret);
}
`

func caseR10(c *cx) {
	gcc := c.need("gcc")
	c.need("lldb-dap-19")
	if p, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.HasPrefix(string(p), "|") || strings.Contains(string(p), "/") {
		c.lacks("the machine's core_pattern (%s) does not write a core in the program's folder", strings.TrimSpace(string(p)))
	}
	root, outside := c.root, c.outside
	writeFile(filepath.Join(root, "crash.c"), r10Source)
	if out, err := exec.Command(gcc, "-g", "-O0", "-o", filepath.Join(root, "crash"), filepath.Join(root, "crash.c")).CombinedOutput(); err != nil {
		c.t.Fatalf("gcc: %v\n%s", err, out)
	}
	crash := func(dir string, args string) string {
		cmd := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./crash "+args)
		cmd.Dir = dir
		cmd.Run()
		core := filepath.Join(dir, "core")
		if _, err := os.Stat(core); err != nil {
			c.lacks("the crash wrote no core in %s (%v); the hard core limit may be 0", dir, err)
		}
		return core
	}
	real := filepath.Join(root, "core.real")
	check(os.Rename(crash(root, ""), real))
	check(copyFile(filepath.Join(root, "crash"), filepath.Join(outside, "crash")))
	secret := crash(outside, "777")

	// The swapper: the name flips between the real core and the outside one.
	name := filepath.Join(root, "crashcore")
	check(os.Link(real, name))
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := name + ".tmp"
		for i := 0; !stop.Load(); i++ {
			os.Remove(tmp)
			if i%2 == 0 {
				os.Symlink(secret, tmp)
			} else {
				os.Link(real, tmp)
			}
			os.Rename(tmp, name)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()

	s := c.serve(root, "--without", "lsp")
	defer s.close()
	const n = 30
	refused, read, leaked := 0, 0, 0
	for i := 0; i < n; i++ {
		l := s.toolWithin(60*time.Second, "debug", map[string]any{"operation": "launch", "program": "crash", "core": "crashcore"})
		if !l.ok() {
			refused++
			continue
		}
		e := s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "evaluate", "expression": "secret"})
		switch {
		case strings.Contains(e.text, "= 777"):
			leaked++
		case strings.Contains(e.text, "= 111"):
			read++
		default:
			c.logf("launch %d: evaluate said %s", i, e.summary(200))
		}
		s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "terminate"})
	}
	c.line(fmt.Sprintf("debug launch core: while its name flips to a link out of the root, %d launches: refused, read the checked core, read the outside core", n),
		fmt.Sprintf("%d refused, %d the checked core, %d the outside core", refused, read, leaked), "19 refused, 9 the checked core, 2 the outside core (the report, of 60: 29, 19, 10)")
	c.want(leaked == 0, "no launch reads the core outside the root")
	c.want(read > 0, "some launches read the checked core")
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}
