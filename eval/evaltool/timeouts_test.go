package evaltool_test

import (
	"cmp"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// block is a tool that returns only when its call is cancelled, standing
// in for a bridge call that would never end.
var block = registry.Family[registry.None]{Key: registry.NewKey[registry.None]("block"), Tools: []registry.Descriptor{{
	Name: "block", Tier: tiers.Read, Description: "waits until cancelled",
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
		<-ctx.Done()
		return msg{}, context.Cause(ctx)
	}),
}}}

// Issue 19 §2 guard: every limit of eval, set small, ends the call, and
// the answer names that limit: the inactivity budget (Python and
// JavaScript, a busy loop and a promise that never settles), the hard cap
// (a cell that prints and so keeps the budget alive; a bridge call that
// would never return), the interrupt grace after the budget (a cell that
// ignores SIGINT; 3 s, not configurable), the output cap, and a cancelled
// call. The kernels are real processes on real pipes, which no synctest
// bubble holds; every other limit of a case is a minute or more, and the
// call's own context ends at two minutes, so the answer's text says which
// limit ended it.
func TestTimeoutsBound(t *testing.T) {
	const grace = 3 * time.Second // eval's interruptGrace
	cases := []struct {
		name  string
		cfg   eval.Config
		lang  string
		code  string
		limit time.Duration
		ctx   time.Duration // the call's own deadline, 0 for two minutes
		want  string
	}{
		{name: "inactivity/python", cfg: eval.Config{Inactivity: time.Second}, code: "while True:\n    pass",
			limit: time.Second, want: "no output for 1s"},
		{name: "inactivity/javascript-loop", cfg: eval.Config{Inactivity: time.Second}, lang: "javascript", code: "for (;;) {}",
			limit: time.Second, want: "no output for 1s"},
		{name: "inactivity/javascript-promise", cfg: eval.Config{Inactivity: time.Second}, lang: "javascript", code: "await new Promise(() => {})",
			limit: time.Second, want: "no output for 1s"},
		{name: "hardcap/printing", cfg: eval.Config{Inactivity: time.Minute, HardCap: 2 * time.Second},
			code: "import time\nwhile True:\n    print('.', flush=True)\n    time.sleep(0.05)", limit: 2 * time.Second, want: "the hard cap"},
		{name: "hardcap/bridge", cfg: eval.Config{Inactivity: time.Minute, HardCap: 2 * time.Second},
			code: "tool('block', {})", limit: 2 * time.Second, want: "block"},
		{name: "hardcap/javascript-bridge", cfg: eval.Config{Inactivity: time.Minute, HardCap: 2 * time.Second}, lang: "javascript",
			code: "await tool('block', {})", limit: 2 * time.Second, want: "block"},
		{name: "grace/ignores-sigint", cfg: eval.Config{Inactivity: time.Second},
			code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", limit: time.Second + grace, want: "ignores the interrupt"},
		{name: "grace/javascript-blocked", cfg: eval.Config{Inactivity: time.Second}, lang: "javascript",
			code: "require('child_process').execSync('sleep 60')", limit: time.Second + grace, want: "kernel state: lost"},
		{name: "outputcap", cfg: eval.Config{Inactivity: time.Minute, HardCap: time.Minute, OutputCap: 64 << 10},
			code: "while True:\n    print('y' * 100)", limit: 0, want: "the output cap"},
		{name: "cancelled", cfg: eval.Config{Inactivity: time.Minute}, code: "import time\ntime.sleep(600)",
			limit: time.Second, ctx: time.Second, want: "cancelled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lang == "javascript" {
				testenv.LookPath(t, "node")
			}
			r := newRun(t, tc.cfg)
			call := func(code, description string) map[string]any {
				a := map[string]any{"code": code, "description": description}
				if tc.lang != "" {
					a["language"] = tc.lang
				}
				return a
			}
			warm, _ := json.Marshal(call("1", "start the kernel before the clock"))
			if _, err := r.Call(context.Background(), tiers.Normal, "eval", warm); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(tc.ctx, 2*time.Minute))
			defer cancel()
			args, _ := json.Marshal(call(tc.code, "a cell that runs into a limit"))
			res, err := r.Call(ctx, tiers.Normal, "eval", args)
			if err != nil {
				t.Fatal(err)
			}
			text := registry.ResultText(res)
			want(t, text, tc.want)
			if tc.ctx == 0 && ctx.Err() != nil {
				t.Fatalf("only the test's two minutes ended the call:\n%s", text)
			}
			t.Logf("limit %s:\n%s", tc.limit, text)
		})
	}
}
