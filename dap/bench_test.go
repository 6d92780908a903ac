package dap

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Debugging figures beside the adapters themselves, in one run:
//
//	go test -run XXX -bench 'LaunchToBreakpoint|StepOver' -benchtime 20x -count 3 ./dap/
//
// LaunchToBreakpoint: a prebuilt Go program (delve's exec mode, so the
// build is not in either figure) from start to the first breakpoint,
// through the Supervisor and by driving dlv dap directly with go-dap over
// the same unix-socket transport. StepOver: one step_over with what a stop
// result carries (stack, scopes, locals), through the Supervisor and as the
// same requests sent straight on the session's connection.

const benchGo = `package main

import "fmt"

func main() {
	sum := 0
	for i := 0; i < 1000000; i++ {
		sum += i
		sum ^= i
	}
	fmt.Println(sum)
}
`

func prebuilt(b *testing.B) (root, bin string) {
	testenv.LookPath(b, "dlv")
	root = b.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/bench\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte(benchGo), 0o644)
	bin = filepath.Join(root, "prog")
	cmd := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	root, _ = filepath.EvalSymlinks(root)
	bin, _ = filepath.EvalSymlinks(bin)
	return root, bin
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func BenchmarkLaunchToBreakpoint(b *testing.B) {
	root, bin := prebuilt(b)
	b.Run("ours", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			g := newSupervisorB(b, root)
			g.SetBreakpoints(context.Background(), at(root, "main.go"), []breakpoint.LineSpec{{Line: 8}}, nil, false)
			t0 := time.Now()
			res, err := g.Launch(context.Background(), adapter.LaunchSpec{Adapter: "delve", Program: at(root, bin)}, time.Minute)
			times = append(times, time.Since(t0))
			if err != nil || res.Outcome != "stopped" {
				b.Fatalf("%+v %v", res, err)
			}
			g.Close()
		}
		b.ReportMetric(float64(p50(times).Microseconds())/1000, "p50-ms")
	})
	b.Run("direct", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			directLaunch(b, root, bin)
			times = append(times, time.Since(t0))
		}
		b.ReportMetric(float64(p50(times).Microseconds())/1000, "p50-ms")
	})
}

// directLaunch drives dlv dap with go-dap alone: the same transport, the
// same requests, waiting for the stopped event.
func directLaunch(b *testing.B, root, bin string) {
	dir := b.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("dlv", "dap", "--client-addr", "unix:"+sock)
	cmd.Dir = root
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	conn, err := ln.Accept()
	ln.Close()
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	seq := 0
	send := func(m godap.Message) {
		if err := godap.WriteProtocolMessage(conn, m); err != nil {
			b.Fatal(err)
		}
	}
	until := func(ok func(godap.Message) bool) {
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				b.Fatal(err)
			}
			if ok(m) {
				return
			}
		}
	}
	req := func(cmd string) godap.Request {
		seq++
		return godap.Request{ProtocolMessage: godap.ProtocolMessage{Seq: seq, Type: "request"}, Command: cmd}
	}
	send(&godap.InitializeRequest{Request: req("initialize"), Arguments: godap.InitializeRequestArguments{AdapterID: "go", PathFormat: "path", LinesStartAt1: true, ColumnsStartAt1: true}})
	until(func(m godap.Message) bool { _, ok := m.(*godap.InitializeResponse); return ok })
	send(&godap.LaunchRequest{Request: req("launch"), Arguments: []byte(`{"mode":"exec","program":"` + bin + `","outputMode":"remote"}`)})
	until(func(m godap.Message) bool { _, ok := m.(*godap.InitializedEvent); return ok })
	send(&godap.SetBreakpointsRequest{Request: req("setBreakpoints"), Arguments: godap.SetBreakpointsArguments{
		Source: godap.Source{Path: filepath.Join(root, "main.go")}, Breakpoints: []godap.SourceBreakpoint{{Line: 8}}}})
	send(&godap.ConfigurationDoneRequest{Request: req("configurationDone")})
	until(func(m godap.Message) bool { _, ok := m.(*godap.StoppedEvent); return ok })
	send(&godap.DisconnectRequest{Request: req("disconnect"), Arguments: &godap.DisconnectArguments{TerminateDebuggee: true}})
}

func newSupervisorB(b *testing.B, root string) *Supervisor {
	g, err := pathguardNew(root)
	if err != nil {
		b.Fatal(err)
	}
	return NewSupervisor(g, Config{})
}

// BenchmarkStepOver runs on each adapter: the step through the Supervisor
// against the same requests straight on the connection.
func BenchmarkStepOver(b *testing.B) {
	root, bin := prebuilt(b)
	type setup struct {
		name, file string
		line       int
		spec       adapter.LaunchSpec
	}
	cases := []setup{{"delve", "main.go", 8, adapter.LaunchSpec{Adapter: "delve", Program: at(root, bin)}}}
	os.WriteFile(filepath.Join(root, "loop.py"), []byte("s = 0\nfor i in range(1000000):\n    s += i\n    s ^= i\nprint(s)\n"), 0o644)
	cases = append(cases, setup{"debugpy", "loop.py", 3, adapter.LaunchSpec{Adapter: "debugpy", Program: at(root, filepath.Join(root, "loop.py"))}})
	if gcc, err := exec.LookPath("gcc"); err == nil {
		os.WriteFile(filepath.Join(root, "loop.c"), []byte("#include <stdio.h>\nint main(void) {\n\tlong s = 0;\n\tfor (long i = 0; i < 1000000; i++) {\n\t\ts += i;\n\t\ts ^= i;\n\t}\n\tprintf(\"%ld\\n\", s);\n\treturn 0;\n}\n"), 0o644)
		cbin := filepath.Join(root, "loopc")
		if out, err := exec.Command(gcc, "-g", "-O0", "-o", cbin, filepath.Join(root, "loop.c")).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		cases = append(cases, setup{"lldb", "loop.c", 5, adapter.LaunchSpec{Adapter: "lldb", Program: at(root, cbin)}})
	}
	for _, c := range cases {
		g := newSupervisorB(b, root)
		g.SetBreakpoints(context.Background(), at(root, c.file), []breakpoint.LineSpec{{Line: c.line}}, nil, false)
		if _, err := g.Launch(context.Background(), c.spec, time.Minute); err != nil {
			b.Fatal(err)
		}
		g.SetBreakpoints(context.Background(), at(root, c.file), nil, nil, true)
		benchSteps(b, c.name, g)
		g.Close()
	}
}

func benchSteps(b *testing.B, name string, g *Supervisor) {
	ctx := context.Background()
	b.Run(name+"/ours", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			res, err := g.Resume(ctx, "step_over", 0, time.Minute)
			times = append(times, time.Since(t0))
			if err != nil || res.Outcome != "stopped" {
				b.Fatalf("%+v %v", res, err)
			}
		}
		b.ReportMetric(float64(p50(times).Microseconds())/1000, "p50-ms")
	})
	b.Run(name+"/direct", func(b *testing.B) {
		sess := g.sess
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			st := sess.stops[len(sess.stops)-1]
			after := sess.client.Seq()
			t0 := time.Now()
			if err := sess.client.Call(ctx, "next", map[string]any{"threadId": st.ThreadID}, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := sess.client.WaitEvent(ctx, after, "stopped"); err != nil {
				b.Fatal(err)
			}
			var stack godap.StackTraceResponseBody
			sess.client.Call(ctx, "stackTrace", map[string]any{"threadId": st.ThreadID, "levels": 30}, &stack)
			var scopes godap.ScopesResponseBody
			sess.client.Call(ctx, "scopes", map[string]any{"frameId": stack.StackFrames[0].Id}, &scopes)
			sess.client.Call(ctx, "variables", map[string]any{"variablesReference": scopes.Scopes[0].VariablesReference}, nil)
			times = append(times, time.Since(t0))
		}
		b.ReportMetric(float64(p50(times).Microseconds())/1000, "p50-ms")
	})
}

func pathguardNew(root string) (*pathguard.Guard, error) { return pathguard.New(root) }
