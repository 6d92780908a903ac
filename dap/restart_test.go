package dap

import (
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
)

// restart on each real adapter: the same program stops again at the same
// breakpoint with fresh values, within the same time limit; a later
// reference from before is refused; the program's output starts over.
func TestRestart(t *testing.T) {
	cases := []struct {
		adapter, file, src string
		line               int
		name, want         string
	}{
		{"delve", "main.go", goProgram, 8, "sum", "0"},
		{"debugpy", "app.py", pyProgram, 4, "s", "0"},
		{"lldb", "main.c", cProgram, 6, "sum", "0"},
	}
	for _, c := range cases {
		t.Run(c.adapter, func(t *testing.T) {
			needAdapter(t, c.adapter)
			root, program := sample(t, c.adapter, c.file, c.src)
			s := newSupervisor(t, root, Config{TTL: 10 * time.Minute})
			ctx := testCtx(t)
			if _, err := s.Restart(ctx, 0); err == nil || !strings.Contains(err.Error(), "no debug session") {
				t.Fatalf("restart without a session: %v", err)
			}
			stopAt(t, s, ctx, root, c.file, c.line, adapter.LaunchSpec{Adapter: c.adapter, Program: program}, 60*time.Second)
			deadline := s.sess.Deadline
			if _, err := s.Resume(ctx, "continue", 0, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetVariable(ctx, "", "", c.name, "40", 0); err != nil {
				t.Fatal(err)
			}
			res, err := s.Restart(ctx, 60*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s restarted by %s", c.adapter, res.Restart)
			if res.Outcome != "stopped" || res.Frame == nil || res.Frame.Line != c.line || res.Stop.Breakpoints == nil {
				t.Fatalf("after restart: %+v %+v", res, res.Frame)
			}
			wantLocal(t, res.Locals, c.name, c.want)
			if res.Stop.N != 3 && res.Restart == RestartRequest {
				t.Fatalf("stop numbers go on across an adapter's restart: %+v", res.Stop)
			}
			if !s.sess.Deadline.Equal(deadline) {
				t.Fatalf("restart moved the time limit from %v to %v", deadline, s.sess.Deadline)
			}
			if st := s.Status(); len(st.Breakpoints) != 1 || st.Breakpoints[0].Hits != 1 {
				t.Fatalf("breakpoints after restart: %+v", st.Breakpoints)
			}
			s.SetBreakpoints(ctx, at(root, c.file), nil, nil, true)
			done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
			if err != nil || done.Outcome != "exited" {
				t.Fatalf("continue after restart: %+v %v", done, err)
			}
			out, _ := s.Output(1 << 20)
			if all := done.Output + out.Output; !strings.Contains(all, "total 6") {
				t.Fatalf("output after restart %q", all)
			}
		})
	}
}
