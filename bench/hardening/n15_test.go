//go:build hardening

package hardening

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
)

var builtIn = regexp.MustCompile(`Built in ([0-9.]+)(ms|s)`)

// N15: a debuggee printing 50 MB in 100-byte lines under debug takes at
// most about twice its own time, or where the adapter itself is the slow
// part (lldb-dap turns the output into events at some 10 MB/s, debugpy
// likewise), twice the adapter's time driven by a client that drops every
// message; plus 10 s for the adapter's start. Every output event copied
// the whole 1 MiB buffer under the session lock.
func TestN15(t *testing.T) { runCase(t, "N15", caseN15) }

func caseN15(c *cx) {
	const lines = 500_000 // of 100 bytes: 50 MB
	root := c.root
	writeFile(filepath.Join(root, "go.mod"), "module example.com/flood\n\ngo 1.22\n")
	writeFile(filepath.Join(root, "main.go"), fmt.Sprintf("package main\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nfunc main() {\n\tline := []byte(strings.Repeat(\"x\", 99) + \"\\n\")\n\tfor i := 0; i < %d; i++ {\n\t\tos.Stdout.Write(line)\n\t}\n}\n", lines))
	writeFile(filepath.Join(root, "flood.py"), fmt.Sprintf("import sys\nline = 'x' * 99 + '\\n'\nfor i in range(%d):\n    sys.stdout.write(line)\n", lines))
	writeFile(filepath.Join(root, "c", "flood.c"), fmt.Sprintf("#include <stdio.h>\nint main(void) {\n\tfor (int i = 0; i < %d; i++)\n\t\tfputs(\"%s\\n\", stdout);\n\treturn 0;\n}\n", lines, strings.Repeat("x", 99)))

	direct := func(dir, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, c.env()
		cmd.Stdout = io.Discard
		t0 := time.Now()
		check(cmd.Run())
		return time.Since(t0)
	}
	for _, a := range []struct {
		adapter, need, program string
		prepare                func() []string // the direct command
		alone                  []string        // the adapter's command over stdio, to time it alone
		before                 string
	}{
		{"delve", "dlv", ".", func() []string {
			out, err := runProg(root, c.env(), "go", "build", "-o", filepath.Join(c.base, "flood-go"), ".")
			check(fmtErr(err, out))
			return []string{filepath.Join(c.base, "flood-go")}
		}, nil, "0.57 s, 56.08 s, 99× (the report: 0.39 s, 76.9 s, 199×)"},
		{"debugpy", "python3", "flood.py", func() []string { return []string{"python3", "flood.py"} }, []string{"/usr/bin/python3", "-m", "debugpy.adapter"}, "1.08 s, 14.12 s, 13× (the report: 0.40 s, 18.9 s, 47×)"},
		{"lldb", "lldb-dap-19", "c/flood", func() []string {
			out, err := runProg(filepath.Join(root, "c"), c.env(), "cc", "-g", "-O0", "-o", "flood", "flood.c")
			check(fmtErr(err, out))
			return []string{filepath.Join(root, "c", "flood")}
		}, []string{"lldb-dap-19"}, "0.07 s, 117.56 s, 1612× (the report: 0.02 s, 98.1 s, 4889×)"},
	} {
		c.sub(a.adapter, func(c *cx) {
			c.need(a.need)
			argv := a.prepare()
			own := direct(root, argv[0], argv[1:]...)
			var alone time.Duration
			if a.alone != nil {
				alone = adapterAlone(c, root, a.alone, filepath.Join(root, a.program))
			}
			s := c.serve(root, "--without", "lsp")
			defer s.close()
			r := s.toolWithin(330*time.Second, "debug", map[string]any{"operation": "launch", "adapter": a.adapter, "program": a.program, "timeout_seconds": 300})
			d := r.dur
			if m := builtIn.FindStringSubmatch(r.text); m != nil { // delve's build is not the run
				f, _ := strconv.ParseFloat(m[1], 64)
				if m[2] == "ms" {
					f /= 1000
				}
				d -= time.Duration(f * float64(time.Second))
			}
			exited := strings.Contains(r.text, "exited")
			s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "terminate"})
			now := fmt.Sprintf("%s, %s, %.0f×", secs(own), secs(d), d.Seconds()/own.Seconds())
			if alone > 0 {
				now += fmt.Sprintf("; the adapter alone %s, under debug %.2f× that", secs(alone), d.Seconds()/alone.Seconds())
			}
			c.line(fmt.Sprintf("50 MB printed in 100-byte lines under %s: direct, under debug (launch to exit, build excluded), ratio", a.adapter),
				fmt.Sprintf("%s (%s)", now, excerpt(r.summary(100), 100)), a.before)
			c.want(r.ok() && exited && d < 2*max(own, alone)+10*time.Second, "the program ran to its end within 2× its own time (or the adapter's alone, whichever is longer) plus 10 s for the adapter")
		})
	}
}

func fmtErr(err error, out string) error {
	if err != nil {
		return fmt.Errorf("%v: %s", err, excerpt(out, 300))
	}
	return nil
}

// adapterAlone times a stdio adapter running program to its end, driven by
// a client that answers the handshake and drops every other message: what
// the adapter costs without builtin-tools.
func adapterAlone(c *cx, root string, argv []string, program string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = root, append(c.env(), "PYTHONUNBUFFERED=1")
	in, err := cmd.StdinPipe()
	check(err)
	out, err := cmd.StdoutPipe()
	check(err)
	t0 := time.Now()
	check(cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	r, w := framing.NewReader(out, framing.WithMaxBody(64<<20)), framing.NewWriter(in)
	seq := 0
	send := func(command string, args any) {
		seq++
		body, _ := json.Marshal(map[string]any{"seq": seq, "type": "request", "command": command, "arguments": args})
		check(w.Write(body))
	}
	send("initialize", map[string]any{"adapterID": argv[0], "pathFormat": "path", "linesStartAt1": true, "columnsStartAt1": true})
	launched := false
	deadline := time.AfterFunc(300*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for {
		body, err := r.Read()
		if err != nil {
			panic(fmt.Sprintf("%s alone: %v", argv[0], err))
		}
		var m struct{ Type, Event, Command string }
		json.Unmarshal(body, &m)
		switch {
		case m.Type == "response" && m.Command == "initialize" && !launched:
			launched = true
			send("launch", map[string]any{"program": program, "cwd": root, "console": "internalConsole"})
		case m.Type == "event" && m.Event == "initialized":
			send("configurationDone", map[string]any{})
		case m.Type == "event" && (m.Event == "exited" || m.Event == "terminated"):
			return time.Since(t0)
		}
	}
}
