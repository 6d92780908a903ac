package dap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// BenchmarkOutputFlood (M4) times a program that prints a lot, three
// ways, per adapter: run directly, under the adapter driven by a minimal
// client that reads and drops every message ("adapter", the adapter's own
// time without us), and under the Supervisor ("ours"). It reports the
// seconds of each and ours/adapter and ours/direct:
//
//	go test -run XXX -bench OutputFlood -benchtime 1x ./dap/
//
// BENCH_FLOOD_MB sets the output size (default 50 MB, in 100-byte lines).
func BenchmarkOutputFlood(b *testing.B) {
	mb := 50
	if v, err := strconv.Atoi(os.Getenv("BENCH_FLOOD_MB")); err == nil && v > 0 {
		mb = v
	}
	lines := mb * 1_000_000 / 100
	root := b.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("go.mod", "module example.com/flood\n\ngo 1.22\n")
	write("main.go", fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\nfunc main() {\n\tline := strings.Repeat(\"x\", 99)\n\tfor i := 0; i < %d; i++ {\n\t\tfmt.Println(line)\n\t}\n}\n", lines))
	write("flood.py", fmt.Sprintf("line = 'x' * 99\nfor _ in range(%d):\n    print(line)\n", lines))
	write("flood.c", fmt.Sprintf("#include <stdio.h>\n#include <string.h>\nint main(void) {\n\tchar line[100];\n\tmemset(line, 'x', 99);\n\tline[99] = 0;\n\tfor (int i = 0; i < %d; i++) {\n\t\tputs(line);\n\t}\n\treturn 0;\n}\n", lines))

	type flood struct {
		adapter string
		direct  []string
		spec    adapter.LaunchSpec
	}
	var cases []flood
	testenv.SetupPath()
	if _, err := exec.LookPath("dlv"); err == nil {
		bin := filepath.Join(root, "floodgo")
		build := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", bin, "main.go")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		cases = append(cases, flood{"delve", []string{bin}, adapter.LaunchSpec{Adapter: "delve", Program: at(root, bin)}})
	}
	if spec, _ := adapter.Lookup("debugpy"); adapterCommand(spec) != nil {
		py := adapterCommand(spec)[0]
		cases = append(cases, flood{"debugpy", []string{py, filepath.Join(root, "flood.py")},
			adapter.LaunchSpec{Adapter: "debugpy", Program: at(root, filepath.Join(root, "flood.py")), Python: py}})
	}
	if gcc, err := exec.LookPath("gcc"); err == nil {
		if spec, _ := adapter.Lookup("lldb"); adapterCommand(spec) != nil {
			bin := filepath.Join(root, "floodc")
			if out, err := exec.Command(gcc, "-g", "-O0", "-o", bin, filepath.Join(root, "flood.c")).CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			cases = append(cases, flood{"lldb", []string{bin}, adapter.LaunchSpec{Adapter: "lldb", Program: at(root, bin)}})
		}
	}
	if len(cases) == 0 {
		testenv.Missing(b, "a debug adapter", "dlv, debugpy or lldb-dap")
	}
	for _, c := range cases {
		b.Run(c.adapter, func(b *testing.B) {
			for b.Loop() {
				direct := timeDirect(b, root, c.direct)
				_, kids0 := cpu()
				adapter := timeAdapterAlone(b, root, c.spec)
				self1, kids1 := cpu()
				ours := timeOurs(b, root, c.spec)
				self2, kids2 := cpu()
				b.ReportMetric(direct.Seconds(), "direct-s")
				b.ReportMetric(adapter.Seconds(), "adapter-s")
				b.ReportMetric(ours.Seconds(), "ours-s")
				b.ReportMetric(ours.Seconds()/adapter.Seconds(), "ours/adapter")
				b.ReportMetric(ours.Seconds()/direct.Seconds(), "ours/direct")
				b.ReportMetric((self2 - self1).Seconds(), "ours-cpu-s")
				b.Logf("%s, %d MB: direct %.2f s, adapter alone %.2f s, under debug %.2f s: %.1f× the adapter, %.0f× direct; CPU under debug: this process %.2f s, the adapter and program %.2f s (%.2f s alone)",
					c.adapter, mb, direct.Seconds(), adapter.Seconds(), ours.Seconds(), ours.Seconds()/adapter.Seconds(), ours.Seconds()/direct.Seconds(),
					(self2 - self1).Seconds(), (kids2 - kids1).Seconds(), (kids1 - kids0).Seconds())
			}
		})
	}
}

// timeDirect runs the program with its output read and dropped.
func timeDirect(b *testing.B, root string, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// timeOurs launches through the Supervisor and waits for the exit.
func timeOurs(b *testing.B, root string, l adapter.LaunchSpec) time.Duration {
	g := newSupervisorB(b, root)
	defer g.Close()
	t0 := time.Now()
	res, err := g.Launch(context.Background(), l, 10*time.Minute)
	d := time.Since(t0)
	if err != nil || res.Outcome != "exited" {
		b.Fatalf("under debug: %+v %v", res, err)
	}
	return d
}

// timeAdapterAlone drives the adapter with the same launch arguments and
// the least a client can do: decode each message's envelope, answer the
// handshake, drop the output, stop at the exit.
func timeAdapterAlone(b *testing.B, root string, l adapter.LaunchSpec) time.Duration {
	spec, _ := adapter.Lookup(l.Adapter)
	cmdline := adapterCommand(spec)
	g, err := pathguard.New(root)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	dir := b.TempDir()
	command, args, _, err := request(spec, adapter.Target{LaunchSpec: l, Guard: g, Cwd: g.Root(), Dir: dir}, "", "")
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	var ln net.Listener
	if spec.Transport == adapter.UnixClient {
		sock := filepath.Join(dir, "s")
		if ln, err = net.Listen("unix", sock); err != nil {
			b.Fatal(err)
		}
		for i := range cmdline {
			cmdline[i] = strings.ReplaceAll(cmdline[i], "{addr}", "unix:"+sock)
		}
	}
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	var rw io.ReadWriter
	if ln == nil {
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		rw = struct {
			io.Reader
			io.Writer
		}{out, in}
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if ln != nil {
		conn, err := ln.Accept()
		ln.Close()
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		rw = conn
	}
	r, w := framing.NewReader(rw, framing.WithMaxBody(64<<20)), framing.NewWriter(rw)
	seq := 0
	send := func(command string, args any) {
		seq++
		m := map[string]any{"seq": seq, "type": "request", "command": command}
		if args != nil {
			m["arguments"] = args
		}
		body, _ := json.Marshal(m)
		if err := w.Write(body); err != nil {
			b.Fatal(err)
		}
	}
	send("initialize", map[string]any{"adapterID": spec.ID, "pathFormat": "path", "linesStartAt1": true, "columnsStartAt1": true})
	sentLaunch := false
	for {
		body, err := r.Read()
		if err != nil {
			b.Fatalf("%s alone: %v", spec.ID, err)
		}
		var m struct{ Type, Event, Command string }
		json.Unmarshal(body, &m)
		switch {
		case m.Type == "response" && m.Command == "initialize" && !sentLaunch:
			sentLaunch = true
			send(command, args)
		case m.Type == "event" && m.Event == "initialized":
			send("configurationDone", nil)
		case m.Type == "event" && (m.Event == "exited" || m.Event == "terminated"):
			d := time.Since(t0)
			send("disconnect", map[string]any{"terminateDebuggee": true})
			return d
		}
	}
}

// adapterCommand is the adapter's resolved command line, nil when it is not
// installed.
func adapterCommand(spec adapter.Spec) []string {
	cmd, _ := spec.Command(context.Background())
	return cmd
}

// cpu is the CPU time this process has used, and its waited-for children.
func cpu() (self, children time.Duration) {
	var s, c syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	tv := func(u syscall.Rusage) time.Duration {
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	return tv(s), tv(c)
}
