//go:build hardening

package hardening

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Settings shared by all cases.
var (
	binFlag     = flag.String("bin", "", "builtin-tools binary to test (default: $BUILTIN_TOOLS_BIN, else go build ./cmd/builtin-tools of the root module into a temp folder)")
	toolsFlag   = flag.String("tools", "", "folder holding bin/ and node_modules/.bin of the language servers (default: .tools of the root module)")
	timeoutFlag = flag.Duration("call-timeout", 120*time.Second, "longest wait for one server answer")
	pendingFlag = flag.String("pending", os.Getenv("HARDENING_PENDING"), "pending cases to run anyway: comma-separated ids, or all (default: $HARDENING_PENDING)")

	bin      string        // the binary under test
	toolsDir string        // .tools of the checkout (language servers)
	timeout  time.Duration // per server call
	runTag   string        // in the environment of everything a case starts
)

// pending lists the cases (ID) and measurements (ID/subtest) whose fix
// has not reached main yet: they fail against it, so they are skipped
// unless -pending names them. Remove an entry when its fix lands.
var pending = map[string]string{}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runAll(m))
}

func runAll(m *testing.M) int {
	modRoot := findModule()
	toolsDir = *toolsFlag
	if toolsDir == "" {
		toolsDir = filepath.Join(modRoot, ".tools")
	}
	timeout = *timeoutFlag
	runTag = fmt.Sprintf("hardening-%d-%d", os.Getpid(), time.Now().UnixNano())
	bin = *binFlag
	if bin == "" {
		bin = os.Getenv("BUILTIN_TOOLS_BIN")
	}
	if bin == "" {
		dir, err := os.MkdirTemp("", "hardening-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "hardening:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "builtin-tools")
		build := exec.Command("go", "build", "-o", bin, "./cmd/builtin-tools")
		build.Dir = modRoot
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "hardening: go build ./cmd/builtin-tools in %s: %v\n", modRoot, err)
			return 1
		}
	}
	var err error
	if bin, err = filepath.Abs(bin); err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		return 1
	}
	version, _ := exec.Command(bin, "version").Output()
	version, _, _ = bytes.Cut(version, []byte("\n")) // the second line says how children are contained (R15)

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
	fmt.Println("# case | measurement | now | before: for D1-D15 the 6b63fa9 report's figure, for N1-N26 the figure measured at 39e7bea")
	code := m.Run()
	killAll()
	removeAll()
	return code
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

// skipPending skips a case (ID) or a measurement (ID/name) listed in
// pending unless -pending names it, or its case.
func skipPending(t *testing.T, id string) {
	why, ok := pending[id]
	if !ok {
		return
	}
	caseID, _, _ := strings.Cut(id, "/")
	for _, w := range strings.Split(*pendingFlag, ",") {
		if w = strings.TrimSpace(w); w == "all" || strings.EqualFold(w, id) || strings.EqualFold(w, caseID) {
			return
		}
	}
	t.Skipf("%s is pending (%s): its fix is not on main yet; -pending %s (or HARDENING_PENDING=%s) runs it", id, why, id, id)
}

// runCase runs one case in fresh folders and cleans up after it, however
// it ends; a setup failure (check's panic) fails the test saying why.
func runCase(t *testing.T, id string, f func(c *cx)) {
	skipPending(t, id)
	c := newCx(t, id)
	defer c.cleanup()
	t0 := time.Now()
	c.guard(func() { f(c) })
	t.Logf("case %s took %s", id, time.Since(t0).Round(time.Millisecond))
}
