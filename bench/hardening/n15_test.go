//go:build hardening

package hardening

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var builtIn = regexp.MustCompile(`Built in ([0-9.]+)(ms|s)`)

// N15: a debuggee printing 50 MB in 100-byte lines under debug takes at
// most about twice its own time (plus the adapter's start): every output
// event copied the whole 1 MiB buffer under the session lock.
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
		before                 string
	}{
		{"delve", "dlv", ".", func() []string {
			out, err := runProg(root, c.env(), "go", "build", "-o", filepath.Join(c.base, "flood-go"), ".")
			check(fmtErr(err, out))
			return []string{filepath.Join(c.base, "flood-go")}
		}, "0.57 s, 56.08 s, 99× (the report: 0.39 s, 76.9 s, 199×)"},
		{"debugpy", "python3", "flood.py", func() []string { return []string{"python3", "flood.py"} }, "1.08 s, 14.12 s, 13× (the report: 0.40 s, 18.9 s, 47×)"},
		{"lldb", "lldb-dap-19", "c/flood", func() []string {
			out, err := runProg(filepath.Join(root, "c"), c.env(), "cc", "-g", "-O0", "-o", "flood", "flood.c")
			check(fmtErr(err, out))
			return []string{filepath.Join(root, "c", "flood")}
		}, "0.07 s, 117.56 s, 1612× (the report: 0.02 s, 98.1 s, 4889×)"},
	} {
		c.sub(a.adapter, func(c *cx) {
			c.need(a.need)
			argv := a.prepare()
			own := direct(root, argv[0], argv[1:]...)
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
			c.line(fmt.Sprintf("50 MB printed in 100-byte lines under %s: direct, under debug (launch to exit, build excluded), ratio", a.adapter),
				fmt.Sprintf("%s, %s, %.0f× (%s)", secs(own), secs(d), d.Seconds()/own.Seconds(), excerpt(r.summary(100), 100)), a.before)
			c.want(r.ok() && exited && d < 2*own+10*time.Second, "the program ran to its end within 2× its own time plus 10 s for the adapter")
		})
	}
}

func fmtErr(err error, out string) error {
	if err != nil {
		return fmt.Errorf("%v: %s", err, excerpt(out, 300))
	}
	return nil
}
