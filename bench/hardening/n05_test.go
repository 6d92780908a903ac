//go:build hardening

package hardening

import (
	"fmt"
	"testing"
	"time"
)

// N5: `debug attach` to serve's own pid, or to its parent, is refused; it
// froze serve for good (state t, no answer, SIGTERM and EOF ignored).
func TestN5(t *testing.T) { runCase(t, "N5", caseN5) }

func caseN5(c *cx) {
	root := c.root
	writeFile(root+"/main.go", "package main\n\nfunc main() {}\n")
	for _, a := range []struct{ adapter, prog string }{{"lldb", "lldb-dap-19"}, {"delve", "dlv"}} {
		for _, target := range []string{"serve", "its parent"} {
			c.sub(a.adapter+" "+target, func(c *cx) {
				c.need(a.prog)
				var s *server
				var err error
				if target == "serve" {
					s, err = c.startServe(root, nil, "--without", "lsp")
				} else { // serve under a shell that waits for it
					s, err = c.startServeVia([]string{"sh", "-c", `"$@"; exit $?`, "sh"}, root, nil, "--without", "lsp")
				}
				check(err)
				check(s.initialize())
				defer s.kill()
				pid := s.pid() // serve itself, or the shell above it
				r := s.toolWithin(20*time.Second, "debug", map[string]any{"operation": "attach", "adapter": a.adapter, "pid": pid})
				_, perr := s.call("ping", nil, 5*time.Second)
				st, _ := procStat(pid)
				ping := "answered"
				if perr != nil {
					ping = perr.Error()
				}
				c.line(fmt.Sprintf("debug attach (%s) to %s's pid: answer; ping after; %s's state", a.adapter, target, target),
					fmt.Sprintf("%s; ping %s; state %c", r.summary(140), ping, st.state),
					map[string]string{"serve": "no answer within 20 s; ping no answer within 5 s; state t (only SIGKILL ended it)", "its parent": "attached (\"The program is still running\"); ping answered; state S"}[target])
				c.want(r.err == nil && r.isError && perr == nil && st.state != 't', "the attach refused, serve answering, nothing traced")
				s.toolWithin(5*time.Second, "debug", map[string]any{"operation": "terminate"})
			})
		}
	}
}
