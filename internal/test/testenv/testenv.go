// Package testenv lets tests find the real programs they drive (gopls, delve,
// pyright, the MCP Inspector, grammar libraries) in the folder the install
// script fills, and decides whether a missing one skips or fails the test.
//
// scripts/install.sh puts binaries in .tools/bin, npm packages in
// .tools/node_modules and grammar libraries in .tools/grammars at the module
// root. With BUILTIN_TOOLS_REQUIRE=all (as in CI) a missing program fails the
// test; on a developer's laptop it skips with a message naming the install
// step.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

var (
	rootOnce sync.Once
	rootDir  string
)

// ModuleRoot returns the folder holding this module's go.mod.
func ModuleRoot() string {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	return rootDir
}

// ToolsDir is where scripts/install.sh installs what tests need.
func ToolsDir() string {
	if d := os.Getenv("BUILTIN_TOOLS_TOOLS_DIR"); d != "" {
		return d
	}
	return filepath.Join(ModuleRoot(), ".tools")
}

var pathOnce sync.Once

// SetupPath puts the install folder's bin directories first on PATH, once per
// test binary, so that code under test resolves the installed servers the way
// it would resolve a user's own.
func SetupPath() {
	pathOnce.Do(func() {
		tools := ToolsDir()
		dirs := []string{
			filepath.Join(tools, "bin"),
			filepath.Join(tools, "node_modules", ".bin"),
		}
		os.Setenv("PATH", strings.Join(dirs, string(os.PathListSeparator))+string(os.PathListSeparator)+os.Getenv("PATH"))
	})
}

// Required reports whether a missing component must fail the test rather
// than skip it: BUILTIN_TOOLS_REQUIRE is "all" or a comma list naming it.
func Required(name string) bool {
	v := os.Getenv("BUILTIN_TOOLS_REQUIRE")
	if v == "all" {
		return true
	}
	for _, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == name {
			return true
		}
	}
	return false
}

// Missing fails or skips t because name is not installed. how says what
// installs it.
func Missing(t testing.TB, name, how string) {
	t.Helper()
	msg := name + " is not installed (" + how + "; scripts/install.sh installs it)"
	if Required(name) {
		t.Fatalf("%s, and BUILTIN_TOOLS_REQUIRE=%s demands it", msg, os.Getenv("BUILTIN_TOOLS_REQUIRE"))
	}
	t.Skipf("%s; set BUILTIN_TOOLS_REQUIRE=all to make this a failure", msg)
}

// LookPath resolves a program after SetupPath, failing or skipping t when it
// is absent.
func LookPath(t testing.TB, program string) string {
	t.Helper()
	SetupPath()
	p, err := exec.LookPath(program)
	if err != nil {
		Missing(t, program, "not on PATH or in "+filepath.Join(ToolsDir(), "bin"))
	}
	return p
}

// BuildC compiles the C file src under root with debug information and no
// optimisation (gcc -g -O0, then flags) into bin under root, for tests that
// debug it, and returns bin's path; t fails on a compile error and fails or
// skips, as Missing says, without gcc.
func BuildC(t testing.TB, root, src, bin string, flags ...string) string {
	t.Helper()
	gcc := LookPath(t, "gcc")
	out := filepath.Join(root, bin)
	args := append(append([]string{"-g", "-O0"}, flags...), "-o", out, filepath.Join(root, src))
	if msg, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	return out
}

// File returns a path under the install folder, failing or skipping t when
// it does not exist.
func File(t testing.TB, name, rel string) string {
	t.Helper()
	p := filepath.Join(ToolsDir(), rel)
	if _, err := os.Stat(p); err != nil {
		Missing(t, name, p+" does not exist")
	}
	return p
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Command builds cmd/builtin-tools once per test binary and returns its
// path, for tests that drive the real command (over stdio, under the MCP
// Inspector). The binary lives in the test process's own temporary folder,
// which goes when the test binary ends (internal/proc).
func Command(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := proc.TempDir("bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "builtin-tools")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/builtin-tools")
		cmd.Dir = ModuleRoot()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if out, err := proc.Output(ctx, cmd); err != nil {
			binErr = fmt.Errorf("go build ./cmd/builtin-tools: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Unavailable fails or skips t because something the test needs from the
// machine (a /proc file system, FIFOs, switching users, resource limits) is
// not there; under BUILTIN_TOOLS_REQUIRE=all it fails, as a missing server
// does, so CI never passes by skipping.
func Unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if Required(what) {
		t.Fatalf("%s is not available here (%v), and BUILTIN_TOOLS_REQUIRE=%s demands it", what, err, os.Getenv("BUILTIN_TOOLS_REQUIRE"))
	}
	t.Skipf("%s is not available here (%v); set BUILTIN_TOOLS_REQUIRE=all to make this a failure", what, err)
}

// AsNobody runs the test name of this test binary again as uid 65534, from
// a copy in a fresh folder everyone can read (base; setup, when given, puts
// a fixture there and returns environment for the child), for the checks
// that root would pass by ignoring permission bits. t fails unless the test
// passes there; where the uid cannot be switched to, it is Unavailable.
func AsNobody(t testing.TB, name string, setup func(base string) []string) {
	t.Helper()
	base, err := os.MkdirTemp("", "nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, filepath.Base(self))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+base)
	if setup != nil {
		env = append(env, setup(base)...)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = base
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	// Through proc, like every child: its group, tag and reaper.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := proc.Output(ctx, cmd)
	if errors.Is(err, syscall.EPERM) {
		Unavailable(t, "switching to uid 65534", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as uid 65534: %v\n%s", name, err, out)
	}
}

// ProcessRunning reports whether pid is a live process, a zombie waiting
// to be reaped not counting, for tests that check nothing outlives a kill.
func ProcessRunning(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

var guards sync.Map // root -> *pathguard.Guard, kept for the test binary

// Path is p's location under root (relative to it, or absolute; root itself
// when p is absent) from a guard for root, as a run's guard would give it,
// for tests that call engines directly. A path the guard refuses panics: a
// test of a refusal asks a guard itself.
func Path(root string, p ...string) pathguard.Path {
	v, ok := guards.Load(root)
	if !ok {
		g, err := pathguard.New(root)
		if err != nil {
			panic(err)
		}
		v, _ = guards.LoadOrStore(root, g)
	}
	g := v.(*pathguard.Guard)
	if len(p) == 0 {
		return g.RootPath()
	}
	loc, err := g.Path(p[0])
	if err != nil {
		panic(err)
	}
	return loc
}

// Until calls cond until it holds or limit passes and says whether it held:
// at once, then at growing intervals up to 50 ms. It is the wait for what a
// real process or server does, which no timer in the test controls; code
// that waits only on timers and channels is tested in a testing/synctest
// bubble instead, and code that exposes an event is waited on by it.
func Until(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		timer := time.NewTimer(pause)
		<-timer.C
	}
}

// WaitFor is Until failing t, saying what did not happen, when limit
// passes. The limit is the patience of a loaded machine, not a measure:
// a test never asserts how long something took.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(limit, cond) {
		t.Fatalf("%s: not within %s", what, limit)
	}
}

// Gone waits up to a minute for pid to end (a zombie counts as ended) and
// says whether it did, for tests that check nothing outlives a kill.
func Gone(pid int) bool { return Exits(pid, time.Minute) }

// PidFile waits up to a minute for a process under test to write a pid to
// file and returns it.
func PidFile(t testing.TB, file string) int {
	t.Helper()
	var pid int
	WaitFor(t, time.Minute, "a pid in "+file, func() bool {
		b, _ := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

// ReadFile is the text of the file at path; a file that cannot be read
// fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// WriteTree writes files (slash-separated names under root; a name ending
// in "/" is an empty folder) and their folders.
func WriteTree[T string | []byte](t testing.TB, root string, files map[string]T) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		dir := filepath.Dir(p)
		if strings.HasSuffix(name, "/") {
			dir = p
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Tree writes files (as WriteTree) under a fresh temporary root, which goes
// when the test ends, and returns the root with symbolic links resolved.
func Tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	WriteTree(t, root, files)
	return root
}

// Snapshot records every entry under dir: file bytes and modes, symlink
// targets, folders and their permissions, the mode of anything else. Two
// equal snapshots mean nothing under dir changed.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case d.IsDir():
			out[rel] = "dir " + info.Mode().Perm().String()
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = info.Mode().String() + " " + string(data)
		default: // a FIFO or device is not opened: reading one could block
			out[rel] = info.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// SnapshotDiff describes how two snapshots differ, or returns "".
func SnapshotDiff(before, after map[string]string) string {
	var diffs []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if w != v {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}
