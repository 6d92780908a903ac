package dap

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
)

// set_variable on each real adapter: the value is set in the stop's
// locals, read back from the adapter, and the program goes on with it
// (the total it prints changes); a name the frame lacks is the adapter's
// refusal, as an error.
func TestSetVariable(t *testing.T) {
	cases := []struct {
		adapter, file, src string
		line               int
		name, value, want  string
		out                string
	}{
		{"delve", "main.go", goProgram, 8, "sum", "40", "40", "total 46"},
		{"debugpy", "app.py", pyProgram, 4, "s", "40", "40", "total 46"},
		{"lldb", "main.c", cProgram, 6, "sum", "40", "40", "total 46"},
	}
	for _, c := range cases {
		t.Run(c.adapter, func(t *testing.T) {
			s, ctx, root := stoppedSample(t, c.adapter, c.file, c.src, c.line)
			res, err := s.SetVariable(ctx, "", "", c.name, c.value, 0)
			if err != nil {
				t.Fatal(err)
			}
			if res.Value == nil || res.Value.Value != c.want || res.Note != "" {
				t.Fatalf("read back: %+v %+v", res, res.Value)
			}
			if ev, _ := s.Evaluate(ctx, c.name, "", 0); ev == nil || ev.Value == nil || ev.Value.Value != c.want {
				t.Fatalf("evaluate after the set: %+v", ev)
			}
			res, err = s.SetVariable(ctx, "", "", c.name, "nosuchname + 1", 0)
			switch {
			case err == nil && c.adapter == "debugpy":
				// debugpy accepts it and leaves the variable as it was:
				// the result says so.
				if res.Value.Value != c.want || !strings.Contains(res.Note, "kept its value 40") {
					t.Fatalf("a value that does not evaluate, on debugpy: %+v %+v", res, res.Value)
				}
			case err == nil || !errors.Is(err, adapter.ErrBadArgument) || !strings.Contains(err.Error(), "refused to set "+c.name):
				t.Fatalf("a value that does not evaluate: %v", err)
			}
			if _, err := s.SetVariable(ctx, "7@99", "", c.name, "1", 0); err == nil || !strings.Contains(err.Error(), "is from stop 99") {
				t.Fatalf("a reference from another stop: %v", err)
			}
			s.SetBreakpoints(ctx, at(root, c.file), nil, []int{c.line}, false)
			done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
			if err != nil || done.Outcome != "exited" {
				t.Fatalf("continue: %+v %v", done, err)
			}
			out, _ := s.Output(1 << 20)
			if !strings.Contains(done.Output+out.Output, c.out) {
				t.Fatalf("the program did not go on with the value set: %q", done.Output+out.Output)
			}
		})
	}
}

// An adapter that sets nothing (the scripted one) says so, and what to
// do instead; an empty name is refused.
func TestSetVariableUnsupported(t *testing.T) {
	s, _ := launchHere(t, "delve", Config{}, 20*time.Second)
	ctx := t.Context()
	if _, err := s.SetVariable(ctx, "", "", "n", "4", 0); err == nil || !strings.Contains(err.Error(), "fake sets no variables") || !strings.Contains(err.Error(), "evaluate") {
		t.Fatalf("set_variable without support: %v", err)
	}
	if _, err := s.SetVariable(ctx, "", "", "", "4", 0); err == nil || !strings.Contains(err.Error(), "needs name") {
		t.Fatalf("no name: %v", err)
	}
}

// R11: set_variable had no time bound. A value that runs (debugpy: a
// sleep) or one the adapter chews on (lldb: a 100,000-digit literal) held
// the serial debug tool. It is bounded like evaluate: past the bound pause
// is sent, the result says the value still runs, and the next evaluate or
// set_variable is refused at once instead of queueing behind it;
// terminate ends it all.
func TestSetVariableTimeBound(t *testing.T) {
	cases := []struct {
		adapter, file, src string
		line               int
		name, value        string
	}{
		{"debugpy", "app.py", pyProgram, 4, "s", "__import__('time').sleep(60) or 5"},
		{"lldb", "main.c", cProgram, 6, "sum", strings.Repeat("9", 100000)},
	}
	for _, c := range cases {
		t.Run(c.adapter, func(t *testing.T) {
			s, ctx, _ := stoppedSample(t, c.adapter, c.file, c.src, c.line)
			t0 := time.Now()
			res, err := s.SetVariable(ctx, "", "", c.name, c.value, 2*time.Second)
			t.Logf("set_variable bounded at 2s answered in %s", time.Since(t0).Round(time.Millisecond))
			if err != nil || !res.TimedOut || !strings.Contains(res.Note, "did not finish within 2s") || !strings.Contains(res.Note, "pause was sent") {
				t.Fatalf("a value that does not finish: %+v %v", res, err)
			}
			if _, err := s.Evaluate(ctx, "1 + 1", "", 0); err == nil || !strings.Contains(err.Error(), "an earlier set_variable ("+c.name+" = ") {
				t.Fatalf("an evaluate behind it: %v", err)
			}
			if _, err := s.SetVariable(ctx, "", "", c.name, "1", 0); err == nil || !strings.Contains(err.Error(), "still runs inside the program") {
				t.Fatalf("a set_variable behind it: %v", err)
			}
			if st := s.Status(); st.Session == nil {
				t.Fatalf("status: %+v", st)
			}
			adapter, prog := s.sess.AdapterPID(), s.sess.PID()
			if _, err := s.Terminate(ctx, false); err != nil {
				t.Fatal(err)
			}
			waitGone(t, "the adapter", adapter)
			waitGone(t, "the program", prog)
		})
	}
}
