package dap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// An adapter is a type: every row names its Adapter, ids are unique, and
// no file of dap, dap/debugtool or dap/adapter but the adapters' own
// (dap/adapter/<id>.go) asks which adapter it has.
func TestAdaptersAreTypes(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range adapter.Table {
		if a.Adapter == nil {
			t.Errorf("adapter %s names no Adapter", a.ID)
		}
		if seen[a.ID] {
			t.Errorf("adapter %s is in the table twice", a.ID)
		}
		seen[a.ID] = true
	}
	ids := strings.Join(adapter.IDs(), "|")
	branch := regexp.MustCompile(`(==|!=)\s*"(` + ids + `)"|"(` + ids + `)"\s*(==|!=)|case\s+"(` + ids + `)"|(?i:spec)\.ID\s*(==|!=)|Lookup\("(` + ids + `)"\)`)
	var files []string
	for _, dir := range []string{".", "debugtool", "adapter"} {
		more, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		files = append(files, more...)
	}
	if !slices.Contains(files, filepath.Join("adapter", "table.go")) {
		t.Fatalf("no dap/adapter/table.go among %v: the adapters moved", files)
	}
	for _, f := range files {
		own := filepath.Dir(f) == "adapter" && seen[strings.TrimSuffix(filepath.Base(f), ".go")]
		if strings.HasSuffix(f, "_test.go") || own {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if branch.MatchString(line) {
				t.Errorf("%s:%d asks which adapter it has; that belongs in the adapter's own file: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Each adapter's requests, as sent: typed, so a field is spelled once.
func TestAdapterRequests(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"go.mod": "module m\n", "main.go": "package main\n", "app.py": "", "prog": "", "prog.dart": ""})
	if err := os.Chmod(filepath.Join(root, "prog"), 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	target := func(l adapter.LaunchSpec) adapter.Target {
		return adapter.Target{LaunchSpec: l, Guard: g, Cwd: root, Dir: "/s"}
	}
	env := map[string]string{"B": "2", "A": "1"}
	for _, c := range []struct {
		name, adapter string
		l             adapter.LaunchSpec
		command, want string
		dial          string
	}{
		{"delve builds a package", "delve", adapter.LaunchSpec{Program: at(root, root), Args: []string{"-v"}, Env: env}, "launch",
			`{"mode":"debug","program":"R","args":["-v"],"cwd":"R","env":{"A":"1","B":"2"},"output":"/s/__debug_bin","outputMode":"remote","hideSystemGoroutines":true}`, ""},
		{"delve runs tests", "delve", adapter.LaunchSpec{Program: at(root, root), Test: "TestX"}, "launch",
			`{"mode":"test","program":"R","args":["-test.run","TestX"],"cwd":"R","output":"/s/__debug_bin","outputMode":"remote","hideSystemGoroutines":true}`, ""},
		{"delve runs an executable", "delve", adapter.LaunchSpec{Program: at(root, "prog")}, "launch",
			`{"mode":"exec","program":"R/prog","cwd":"R","outputMode":"remote","hideSystemGoroutines":true}`, ""},
		{"delve attaches", "delve", adapter.LaunchSpec{Attach: true, PID: 42}, "attach", `{"mode":"local","processId":42}`, ""},
		{"debugpy runs a program", "debugpy", adapter.LaunchSpec{Program: at(root, "app.py"), Python: "/py"}, "launch",
			`{"program":"R/app.py","args":[],"cwd":"R","python":["/py"],"console":"internalConsole","redirectOutput":true,"justMyCode":true,"subProcess":false,"stopOnEntry":false}`, ""},
		{"debugpy runs a module", "debugpy", adapter.LaunchSpec{Module: "pytest", Args: []string{"-k", "x"}}, "launch",
			`{"module":"pytest","args":["-k","x"],"cwd":"R","console":"internalConsole","redirectOutput":true,"justMyCode":true,"subProcess":false,"stopOnEntry":false}`, ""},
		{"debugpy dials a port", "debugpy", adapter.LaunchSpec{Attach: true, Port: 5678}, "attach",
			`{"connect":{"host":"127.0.0.1","port":5678},"justMyCode":true,"redirectOutput":true}`, "127.0.0.1:5678"},
		{"debugpy injects itself by pid", "debugpy", adapter.LaunchSpec{Attach: true, PID: 42}, "attach", `{"processId":42,"justMyCode":true}`, ""},
		{"lldb runs an executable", "lldb", adapter.LaunchSpec{Program: at(root, "prog"), Env: env}, "launch",
			`{"program":"R/prog","args":[],"cwd":"R","env":["A=1","B=2"],"stopOnEntry":false}`, ""},
		{"lldb attaches", "lldb", adapter.LaunchSpec{Attach: true, PID: 42}, "attach", `{"pid":42}`, ""},
		{"dart runs a program", "dart", adapter.LaunchSpec{Program: at(root, "prog.dart")}, "launch", `{"program":"R/prog.dart","args":[],"cwd":"R"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, _ := adapter.Lookup(c.adapter)
			command, args, dial, err := request(spec, target(c.l), "", "")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(args)
			if got := strings.ReplaceAll(string(b), root, "R"); command != c.command || got != c.want || dial != c.dial {
				t.Errorf("%s %s (dial %q), want %s %s (dial %q)", command, got, dial, c.command, c.want, c.dial)
			}
		})
	}
	for _, c := range []struct{ adapter, command, want string }{
		{"delve", "launch", `{"mode":"core","program":"/e","cwd":"R","coreFilePath":"/c","hideSystemGoroutines":true}`},
		{"lldb", "attach", `{"program":"/e","coreFile":"/c"}`},
	} {
		spec, _ := adapter.Lookup(c.adapter)
		command, args, _, err := request(spec, target(adapter.LaunchSpec{}), "/c", "/e")
		b, _ := json.Marshal(args)
		if got := strings.ReplaceAll(string(b), root, "R"); err != nil || command != c.command || got != c.want {
			t.Errorf("%s opening a core: %s %s %v, want %s %s", c.adapter, command, got, err, c.command, c.want)
		}
	}
	for _, c := range []struct {
		adapter string
		l       adapter.LaunchSpec
		core    string
		want    string
	}{
		{"dart", adapter.LaunchSpec{Attach: true, PID: 42}, "", "dart cannot attach here"},
		{"lldb", adapter.LaunchSpec{Attach: true, Port: 5678}, "", "attach with lldb needs pid"},
		{"debugpy", adapter.LaunchSpec{}, "/c", "debugpy cannot open a core file; core works with delve (Go) and lldb (C, C++, Rust)"},
	} {
		spec, _ := adapter.Lookup(c.adapter)
		if _, _, _, err := request(spec, target(c.l), c.core, "/e"); err == nil || err.Error() != c.want {
			t.Errorf("%s %+v: %v, want %q", c.adapter, c.l, err, c.want)
		}
	}
}
