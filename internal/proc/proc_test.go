//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

const childEnv = "BUILTIN_TOOLS_PROC_TEST_CHILD"

// TestMain lets the test binary be the process that gets killed (or that
// adopts orphans).
func TestMain(m *testing.M) {
	switch dir := os.Getenv(childEnv); {
	case dir == "":
	case strings.HasPrefix(dir, "adopt:"):
		adoptChild(strings.TrimPrefix(dir, "adopt:"))
	case strings.HasPrefix(dir, "daemoncg-"):
		daemonCgroupChild(dir)
	case strings.HasPrefix(dir, "daemon:"):
		pid, err := StartDetached(exec.Command("sleep", "307"))
		if err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(strings.TrimPrefix(dir, "daemon:"), "daemon"), []byte(strconv.Itoa(pid)), 0o644)
		select {} // until killed
	default:
		cmd := exec.Command("/bin/sh", "-c", `sleep 301 & echo $! > "$1/helper"; setsid sleep 303 & echo $! > "$1/setsid"; `+envless("$1/envless", 306)+`; exec sleep 302`, "sh", dir)
		p, err := Start(cmd, Options{})
		if err != nil {
			os.Exit(3)
		}
		if _, err := TempDir("test-"); err != nil {
			os.Exit(4)
		}
		os.WriteFile(filepath.Join(dir, "server"), []byte(strconv.Itoa(p.Pid())), 0o644)
		os.WriteFile(filepath.Join(dir, "tmp"), []byte(processDir()), 0o644)
		select {} // until killed
	}
	os.Exit(m.Run())
}

// envless is a shell command that starts `sleep n` with no environment
// and in a session of its own (env -i setsid), as R15's attack did, and
// returns once the sleep wrote its pid to file (a shell word): it has then
// left the group and the tag, and a kill of the group cannot catch it.
func envless(file string, n int) string {
	return `env -i setsid /bin/sh -c 'echo $$ > "$0"; exec sleep ` + strconv.Itoa(n) + `' ` + file + ` & ` +
		`while [ ! -s ` + file + ` ]; do sleep 0.01 2>/dev/null || sleep 1; done`
}

// adoptChild starts a grandchild that leaves both the group and the
// environment tag, so only adoption can find it; it writes its pid, then
// waits for a line on stdin and calls Shutdown.
func adoptChild(dir string) {
	if err := AdoptOrphans(); err != nil {
		os.Exit(5)
	}
	// Uncontained: in a cgroup of its own the orphan would end with the
	// shell, and only the subreaper is under test here.
	cmd := exec.Command("/bin/sh", "-c", `setsid env -i /bin/sleep 304 & echo $! > "$1/orphan"; sleep 0.5`, "sh", dir)
	p, err := Start(cmd, Options{Uncontained: true})
	if err != nil {
		os.Exit(3)
	}
	p.Wait()
	os.WriteFile(filepath.Join(dir, "reaper"), []byte(strconv.Itoa(ReaperPID())), 0o644)
	io.ReadAll(os.Stdin)
	Shutdown()
	os.Exit(0)
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPid(path string) int {
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// selfChild is this test binary run as the child TestMain plays, as
// childEnv=role says (not started).
func selfChild(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	return cmd
}

// killedParent starts this test binary as a process that starts a server
// (TestMain), which forks a helper into its group, one that calls setsid
// and one that also clears its environment (env -i setsid); it returns
// their pids once all run, the process, and the dir they were written to.
func killedParent(t *testing.T) (*exec.Cmd, map[string]int, string) {
	t.Helper()
	dir := t.TempDir()
	parent := selfChild(t, dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill() })
	pids := map[string]int{}
	waitFor(t, "the child never started its server", 20*time.Second, func() bool {
		for _, n := range []string{"server", "helper", "setsid", "envless"} {
			pids[n] = readPid(filepath.Join(dir, n))
		}
		_, err := os.Stat(filepath.Join(dir, "tmp"))
		return pids["server"] != 0 && pids["helper"] != 0 && pids["setsid"] != 0 && pids["envless"] != 0 && err == nil
	})
	envless := pids["envless"] // not 0: waitFor saw it
	t.Cleanup(func() { syscall.Kill(envless, syscall.SIGKILL) })
	return parent, pids, dir
}

// D12, N7, N19: SIGKILL of the process that started a server leaves
// neither the server, nor the helper it forked into its group, nor one that
// called setsid, nor the process's temporary folder.
func TestNothingOutlivesAKilledParent(t *testing.T) {
	parent, pids, dir := killedParent(t)
	delete(pids, "envless") // R15: TestEnvlessHelperOfAKilledParent
	tmp, _ := os.ReadFile(filepath.Join(dir, "tmp"))
	for n, pid := range pids {
		if !Running(pid) {
			t.Fatalf("%s (pid %d) not running before the kill", n, pid)
		}
	}
	if _, err := os.Stat(string(tmp)); err != nil {
		t.Fatalf("the child's temporary folder: %v", err)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	waitFor(t, "a process survived SIGKILL of its parent", 10*time.Second, func() bool {
		for _, pid := range pids {
			if Running(pid) {
				return false
			}
		}
		return true
	})
	waitFor(t, "the killed process's temporary folder is still there", 5*time.Second, func() bool {
		_, err := os.Stat(string(tmp))
		return errors.Is(err, os.ErrNotExist)
	})
}

// needCgroups skips a test of what only a cgroup of each child catches,
// saying why this system gives none (the programs the test runs are not
// in question: those it needs it runs either way).
func needCgroups(t *testing.T) {
	t.Helper()
	if ok, why := Cgroups.Containment(); !ok {
		t.Skipf("this system gives no cgroup to each child: %s", why)
	}
}

// R15 (L-7 of the third attack): a helper that clears its environment and
// calls setsid (env -i setsid sleep) escapes the group and the tag; in the
// cgroup of the child that started it, it is killed with the rest when the
// process that started the child dies of SIGKILL.
func TestEnvlessHelperOfAKilledParent(t *testing.T) {
	needCgroups(t)
	parent, pids, _ := killedParent(t)
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	waitFor(t, "the env -i setsid helper survived SIGKILL of its parent", 10*time.Second, func() bool { return !Running(pids["envless"]) })
}

// R15: the same helper ends with the child that started it.
func TestEnvlessHelperEndsWithItsChild(t *testing.T) {
	needCgroups(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	p, err := Start(exec.Command("/bin/sh", "-c", envless(`"$1"`, 307)+`; echo started`, "sh", pidFile), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	pid := readPid(pidFile)
	if pid <= 0 {
		t.Fatalf("the child wrote no pid of its helper (%s)", p.Tail())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	waitFor(t, "the env -i setsid helper outlived the child that started it", 5*time.Second, func() bool { return !Running(pid) })
}

// The reaper kills the groups still recorded when its input ends, and only
// those: a group removed with "-" is left alone.
func TestReaperKillsOnlyRecordedGroups(t *testing.T) {
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "305")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go c.Wait()
		t.Cleanup(func() { c.Process.Kill() })
		return c
	}
	kept, killed := start(), start()
	script := exec.Command("/bin/sh", "-c", reaperScript, "reaper", "")
	script.Stdin = strings.NewReader("+ " + strconv.Itoa(kept.Process.Pid) + "\n+ " + strconv.Itoa(killed.Process.Pid) + "\n- " + strconv.Itoa(kept.Process.Pid) + "\n")
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("reaper: %v\n%s", err, out)
	}
	waitFor(t, "a recorded group survived the end of the reaper's input", 5*time.Second, func() bool { return !Running(killed.Process.Pid) })
	if !Running(kept.Process.Pid) {
		t.Fatal("a group removed from the record was killed")
	}
}

// The os/exec defect the supervisor removes: a child that writes its last
// words and exits at once loses none of them, whether the caller reads the
// pipe itself or has it copied.
func TestLastOutputKept(t *testing.T) {
	const script = `i=0; while [ $i -lt 2000 ]; do echo "line $i of the output"; i=$((i+1)); done; echo LAST >&2; echo LAST`
	for round := 0; round < 20; round++ {
		p, err := Start(exec.Command("/bin/sh", "-c", script), Options{PipeStdout: true})
		if err != nil {
			t.Fatal(err)
		}
		<-p.Exited() // the reader starts late, after the exit: nothing is lost
		out, _ := io.ReadAll(p.Stdout())
		if !bytes.HasSuffix(out, []byte("line 1999 of the output\nLAST\n")) {
			t.Fatalf("round %d: piped output lost its end (%d bytes): %q", round, len(out), out[max(0, len(out)-60):])
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if p.Tail().String() != "LAST" {
			t.Fatalf("stderr tail %q", p.Tail().String())
		}
		var buf bytes.Buffer
		p, err = Start(exec.Command("/bin/sh", "-c", script), Options{Stdout: &buf})
		if err != nil {
			t.Fatal(err)
		}
		p.Wait()
		if !bytes.HasSuffix(buf.Bytes(), []byte("LAST\n")) || strings.Count(buf.String(), "\n") != 2001 {
			t.Fatalf("round %d: copied output lost lines: %d", round, strings.Count(buf.String(), "\n"))
		}
	}
}

// N6: a background grandchild that keeps the output pipe open does not keep
// the process "running": it ends with its parent, in its group or out of it.
// (The grandchild would hold the pipe for five minutes; the test gives up
// after one, a guard against hanging, not a measure.)
func TestGrandchildHoldingOutput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, line string }{
		{"background", `sleep 300 & echo $! > "$1"; echo result`},
		{"setsid", `setsid sleep 300 & echo $! > "$1"; echo result`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(dir, c.name)
			var buf bytes.Buffer
			p, err := Start(exec.Command("/bin/sh", "-c", c.line, "sh", pidFile), Options{Stdout: &buf})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Done():
			case <-time.After(time.Minute):
				t.Fatal("the process stays running while its grandchild holds its output")
			}
			if buf.String() != "result\n" || p.Wait() != nil {
				t.Fatalf("output %q, wait %v", buf.String(), p.Wait())
			}
			child := readPid(pidFile)
			waitFor(t, "the grandchild outlived its parent", 5*time.Second, func() bool { return child != 0 && !Running(child) })
		})
	}
}

// Stop signals, waits the grace, then kills; the result says it was us.
// The process says when SIGTERM came and ticks on, every 50 ms: ticks
// after it show it ran on into the grace (a kill at once leaves none).
func TestStopEscalates(t *testing.T) {
	p, err := Start(exec.Command("/bin/sh", "-c", `trap 'echo term' TERM; echo ready; while :; do sleep 0.05; echo tick; done`), Options{PipeStdout: true, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 6)
	if _, err := io.ReadFull(p.Stdout(), line); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(p.Stdout())
	if _, after, ok := strings.Cut(string(rest), "term\n"); !ok || strings.Count(after, "tick") < 2 {
		t.Errorf("not run on after SIGTERM into its grace: it printed %q", rest)
	}
	if sig, ok := p.Signaled(); !ok || sig != syscall.SIGKILL || !p.StoppedByUs() {
		t.Fatalf("signaled %v %v, by us %v", sig, ok, p.StoppedByUs())
	}
	if p.ExitStatus() != "killed by signal killed" {
		t.Fatalf("exit status %q", p.ExitStatus())
	}
}

// A probe that hangs ends at its context's deadline, with the time said.
func TestProbeThatHangs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out, err := Probe(ctx, "/bin/sh", "-c", "echo started; exec sleep 100")
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if string(out) != "started\n" {
		t.Fatalf("output %q", out)
	}
	if !strings.Contains(err.Error(), "did not finish within") {
		t.Fatalf("message %q", err)
	}
	// It ran outside any checkout.
	out, err = Probe(context.Background(), "/bin/pwd")
	if err != nil || strings.TrimSpace(string(out)) != NeutralDir {
		t.Fatalf("probe ran in %q (%v)", out, err)
	}
	// A failing program's exit is an *exec.ExitError with its output.
	out, err = Probe(context.Background(), "/bin/sh", "-c", "echo boom >&2; exit 3")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "boom\n" {
		t.Fatalf("%q %v", out, err)
	}
}

// Children carry the tag; the tag of an inherited builtin-tools is replaced.
func TestTagged(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `echo "$`+tagVar+`"`)
	cmd.Env = append(os.Environ(), tagVar+"=someone_else_1")
	out, err := Output(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, tagPrefix()) {
		t.Fatalf("tag %q, want prefix %q", got, tagPrefix())
	}
}

func TestTail(t *testing.T) {
	tl := NewTail(16)
	tl.Write([]byte(strings.Repeat("é", 20))) // 40 bytes
	if s := tl.String(); !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) || len(s) > 16 {
		t.Fatalf("tail %q", s)
	}
	for i := 0; i < 100; i++ {
		tl.Write([]byte("ab"))
	}
	if tl.Seen() != 240 || tl.String() != strings.Repeat("ab", 8) {
		t.Fatalf("seen %d tail %q", tl.Seen(), tl.String())
	}
	if !strings.HasPrefix(tl.Head(), "éé") {
		t.Fatalf("head %q", tl.Head())
	}
	h := NewTail(0)
	h.Write([]byte("a" + strings.Repeat("€", headBytes))) // the head ends inside a character
	if s := h.Head(); !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		t.Fatalf("head cut a character: %q", s[len(s)-4:])
	}
}

// N19: the folders of dead processes of this instance are swept; those of
// live ones and of other instances are not.
func TestSweepDirs(t *testing.T) {
	base := t.TempDir()
	dead := exec.Command("true")
	dead.Run()
	deadOwner := instance() + "-" + strconv.Itoa(dead.Process.Pid)
	names := map[string]bool{ // name -> swept
		dirPrefix + deadOwner:             true,
		dirPrefix + deadOwner + "-123456": true,
		dirPrefix + Owner():               false,
		dirPrefix + "other-4026531836-" + strconv.Itoa(dead.Process.Pid): false,
		dirPrefix + "gopls-12345": false,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(base, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweepDirs(base)
	for n, swept := range names {
		_, err := os.Stat(filepath.Join(base, n))
		if gone := errors.Is(err, os.ErrNotExist); gone != swept {
			t.Errorf("%s: gone %v, want %v", n, gone, swept)
		}
	}
}

// The scan a child's end costs (every process's environment read once).
func BenchmarkEndTagged(b *testing.B) {
	for b.Loop() {
		endTagged("none")
	}
}

// Start to Done of a child that exits at once, tag scan included.
func BenchmarkStartWait(b *testing.B) {
	for b.Loop() {
		p, err := Start(exec.Command("/bin/true"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		p.Wait()
	}
}

// A daemon (the language-server broker) started by a child of this
// process, which runs in a cgroup this process made for it, outlives the
// child's end: it left that cgroup, its group and its session.
func TestDaemonOutlivesItsStarter(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(selfChild(t, "daemon:"+dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var daemon int
	waitFor(t, "the child never started its daemon", 20*time.Second, func() bool {
		daemon = readPid(filepath.Join(dir, "daemon"))
		return daemon != 0
	})
	t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
	p.Kill()
	<-p.Done()
	if !Running(daemon) {
		t.Fatalf("the daemon (pid %d) ended with the process that started it", daemon)
	}
	if want := Cgroups.Daemons(); want != "" {
		b, _ := os.ReadFile(filepath.Join(want, "cgroup.procs"))
		if !strings.Contains("\n"+string(b), "\n"+strconv.Itoa(daemon)+"\n") {
			t.Fatalf("the daemon is not in %s: %q", want, b)
		}
	}
}

// daemonCgroupChild plays the processes of TestDaemonCgroupRemovedWhenEmpty,
// as role says ("daemoncg-ROLE:DIR"): a starter whose daemon ends at once
// (true), a starter that ends before its daemon (outlive), and that
// daemon, which ends at Shutdown once DIR/go is opened for writing; and a
// later process, which only sets up its cgroups (sweep).
func daemonCgroupChild(role string) {
	role, dir, _ := strings.Cut(strings.TrimPrefix(role, "daemoncg-"), ":")
	self, _ := os.Executable()
	var cmd *exec.Cmd
	switch role {
	case "sweep":
		waitGate(dir)
		Cgroups.Containment()
		select {} // until killed
	case "true":
		cmd = exec.Command("true")
	case "outlive":
		cmd = exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=daemoncg-daemon:"+dir)
	case "daemon":
		waitGate(dir)
		Shutdown()
		os.Exit(0)
	}
	pid, err := StartDetached(cmd)
	if err != nil {
		os.Exit(3)
	}
	os.WriteFile(filepath.Join(dir, "daemon"), []byte(strconv.Itoa(pid)), 0o644)
	if role == "outlive" {
		Shutdown()
		os.Exit(0)
	}
	select {} // until killed
}

// waitGate waits until the test opens DIR/go for writing and closes it.
func waitGate(dir string) {
	if f, err := os.Open(filepath.Join(dir, "go")); err == nil {
		f.Read(make([]byte, 1))
		f.Close()
	}
}

// Working finds a child by its command line and its folder, and no longer
// once it has ended.
func TestWorking(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	cmd := exec.Command("sleep", "308")
	cmd.Dir = dir
	p, err := Start(cmd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if got := Working("sleep", dir); !slices.Equal(got, []int{pid}) {
		t.Errorf("sleep working in its folder: %v, want [%d]", got, pid)
	}
	if !slices.Contains(Working("sleep", ""), pid) {
		t.Errorf("sleep working anywhere: %v lacks %d", Working("sleep", ""), pid)
	}
	if got := Working("sleep", other); len(got) != 0 || len(Working("not-a-program-name", dir)) != 0 {
		t.Errorf("found in another folder or by another name: %v", got)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := Working("sleep", dir); len(got) != 0 {
		t.Errorf("an ended sleep is still found: %v", got)
	}
}
