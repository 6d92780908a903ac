// Command hardening reruns the reproductions of the reliability report
// (reliability-6b63fa9.md, defects D1..D15) against a built builtin-tools
// binary and prints, one line per measurement, the figure now beside the
// report's figure from before the fix:
//
//	go run ./bench/hardening [-bin PATH] [-case D1,D4,...|all] [-timeout 120s]
//
// Every case works in fresh temp folders (a root and an "outside" sibling)
// and removes them after; every process it starts is killed by the end.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Settings shared by all cases.
var (
	bin      string        // the binary under test
	toolsDir string        // .tools of the checkout (language servers)
	timeout  time.Duration // per server call
	verbose  bool
)

type testCase struct {
	name string
	run  func(*cx)
}

var cases = []testCase{
	{"D1", caseD1},
	{"D2", caseD2},
	{"D3", caseD3},
	{"D4", caseD4},
	{"D5", caseD5},
	{"D6", caseD6},
	{"D7", caseD7},
	{"D8", caseD8},
	{"D9", caseD9},
	{"D10", caseD10},
	{"D11", caseD11},
	{"D12", caseD12},
	{"rust-analyzer", caseRA},
	{"D13", caseD13},
	{"D14", caseD14},
	{"D15", caseD15},
}

func main() {
	binFlag := flag.String("bin", "", "builtin-tools binary to test (default: go build ./cmd/builtin-tools into a temp folder)")
	caseFlag := flag.String("case", "all", "cases to run, comma-separated: "+caseNames()+", or all")
	flag.StringVar(&toolsDir, "tools", "", "folder holding bin/ and node_modules/.bin of the language servers (default: .tools of the module)")
	flag.DurationVar(&timeout, "timeout", 120*time.Second, "longest wait for one server answer")
	flag.BoolVar(&verbose, "v", false, "print server stderr and progress to stderr")
	flag.Parse()

	selected, err := selectCases(*caseFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(2)
	}
	modRoot := findModule()
	if toolsDir == "" {
		toolsDir = filepath.Join(modRoot, ".tools")
	}
	bin = *binFlag
	if bin == "" {
		dir, err := os.MkdirTemp("", "hardening-bin-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "builtin-tools")
		build := exec.Command("go", "build", "-o", bin, "./cmd/builtin-tools")
		build.Dir = modRoot
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			os.RemoveAll(dir)
			fatal(fmt.Errorf("go build ./cmd/builtin-tools: %v", err))
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		fatal(err)
	}
	version, _ := exec.Command(bin, "version").Output()

	// An interrupt still kills what was started and removes the folders.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		killAll()
		removeAll()
		os.Exit(130)
	}()

	fmt.Printf("# %s (%s), %s, %s %s/%s, %d CPUs\n", strings.TrimSpace(string(version)), bin,
		time.Now().Format("2006-01-02 15:04"), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("# case | measurement | now | before: the report's figure at 6b63fa9")
	for _, tc := range selected {
		runCase(tc)
	}
	killAll()
	removeAll()
}

func caseNames() string {
	var n []string
	for _, c := range cases {
		n = append(n, c.name)
	}
	return strings.Join(n, ",")
}

func selectCases(list string) ([]testCase, error) {
	var out []testCase
	want := map[string]bool{}
	for _, w := range strings.Split(list, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "ra" {
			w = "rust-analyzer"
		}
		if w != "" {
			want[w] = true
		}
	}
	for _, c := range cases {
		if want["all"] || want[strings.ToLower(c.name)] {
			out = append(out, c)
			delete(want, strings.ToLower(c.name))
		}
	}
	delete(want, "all")
	for w := range want {
		return nil, fmt.Errorf("unknown case %q (cases: %s)", w, caseNames())
	}
	return out, nil
}

// findModule walks up from the working folder to the builtin-tools module.
func findModule() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/builtin-tools/builtin-tools\n") {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "hardening:", err)
	killAll()
	removeAll()
	os.Exit(1)
}

// runCase runs one case; a setup failure (a panic of check) ends the case
// with one line saying why.
func runCase(tc testCase) {
	c := newCx(tc.name)
	defer c.cleanup()
	defer func() {
		if r := recover(); r != nil {
			if ce, ok := r.(caseErr); ok {
				c.line("case aborted", ce.err.Error(), "-")
			} else {
				c.line("case aborted", fmt.Sprintf("panic: %v", r), "-")
			}
		}
	}()
	t0 := time.Now()
	tc.run(c)
	c.logf("case %s took %s", tc.name, time.Since(t0).Round(time.Millisecond))
}
