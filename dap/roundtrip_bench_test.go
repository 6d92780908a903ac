package dap

import (
	"context"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// Round trips of run_to_line and restart, on delve (a prebuilt program,
// exec mode) and lldb-dap (C):
//
//	go test -run XXX -bench 'RunToLine|Restart' -benchtime 20x ./dap/
//
// RunToLine: one run_to_line from one line of a loop to the next (the
// one-shot breakpoint sent, continue, the stop with its frame and locals,
// the breakpoint removed and the file's list sent again). Restart: the
// program run again to its first breakpoint (lldb-dap and delve both
// offer the restart request).

const benchC = `#include <stdio.h>

int main(void) {
	long sum = 0;
	for (long i = 0; i < 100000000; i++) {
		sum += i;
		sum ^= i;
	}
	printf("%ld\n", sum);
	return 0;
}
`

type benchTarget struct {
	name, file string
	program    func(b *testing.B) (root, bin string)
	lines      [2]int
}

func benchTargets() []benchTarget {
	return []benchTarget{
		{"delve", "main.go", prebuilt, [2]int{8, 9}},
		{"lldb", "main.c", func(b *testing.B) (string, string) {
			needAdapter(b, "lldb")
			root := testenv.Tree(b, map[string]string{"main.c": benchC})
			return root, testenv.BuildC(b, root, "main.c", "prog")
		}, [2]int{6, 7}},
	}
}

// stopped builds tg's program, launches it on a supervisor of its own and
// returns once it stops at tg's first line.
func (tg benchTarget) stopped(b *testing.B) (*Supervisor, context.Context, string) {
	root, bin := tg.program(b)
	s := newSupervisor(b, root, Config{})
	ctx := testCtx(b)
	stopAt(b, s, ctx, root, tg.file, tg.lines[0], adapter.LaunchSpec{Adapter: tg.name, Program: at(root, bin)}, time.Minute)
	return s, ctx, root
}

func BenchmarkRunToLine(b *testing.B) {
	for _, tg := range benchTargets() {
		b.Run(tg.name, func(b *testing.B) {
			s, ctx, root := tg.stopped(b)
			s.SetBreakpoints(ctx, at(root, tg.file), nil, nil, true)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := s.RunToLine(ctx, at(root, tg.file), tg.lines[(i+1)%2], 0)
				if err != nil || res.RunTo == nil || !res.RunTo.Reached {
					b.Fatalf("run_to_line: %+v %v", res, err)
				}
			}
		})
	}
}

func BenchmarkRestart(b *testing.B) {
	for _, tg := range benchTargets() {
		b.Run(tg.name, func(b *testing.B) {
			s, ctx, _ := tg.stopped(b)
			b.ResetTimer()
			how := ""
			for i := 0; i < b.N; i++ {
				res, err := s.Restart(ctx, time.Minute)
				if err != nil || res.Outcome != "stopped" {
					b.Fatalf("restart: %+v %v", res, err)
				}
				how = res.Restart
			}
			b.Log(tg.name, "restarted by", how)
		})
	}
}
