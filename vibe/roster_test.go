package vibe

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
	"github.com/builtin-tools/builtin-tools/vibe/statedir"
)

func newRoster(t *testing.T, max int) *Roster {
	t.Helper()
	script, err := filepath.Abs("testdata/worker.sh")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{StateDir: t.TempDir(), Dir: t.TempDir(), MaxRunning: max, ResultChars: 500,
		Backends: map[string]runner.Backend{"fast": runner.Command{Line: script, Grace: 500 * time.Millisecond}, "good": runner.Command{Line: script + " good"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func spawn(t *testing.T, r *Roster, brief string) Info {
	t.Helper()
	in, err := r.Spawn(SpawnRequest{Brief: brief, Label: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func wait(t *testing.T, r *Roster, all bool, timeout time.Duration, ids ...string) ([]Info, []string) {
	t.Helper()
	done, pending, err := r.Wait(context.Background(), WaitRequest{IDs: ids, All: all, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return done, pending
}

// until waits until cond holds, reading it again at each change of the
// roster (a change closes r.changed), for at most a minute.
func until(t *testing.T, r *Roster, what string, cond func() bool) {
	t.Helper()
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// hasUnread says whether some result waits to be read.
func hasUnread(r *Roster) func() bool { return func() bool { return len(r.Unread()) > 0 } }

// working waits until the i-th worker runs and its process has said so
// (worker.sh prints "working" before it sleeps). Output is no roster
// change, so this polls.
func working(t *testing.T, r *Roster, i int) {
	t.Helper()
	testenv.WaitFor(t, time.Minute, "the worker's first output", func() bool {
		w := r.List()[i]
		return w.Status == Running && strings.Contains(w.Tail, "working")
	})
}

func TestSpawnAndWait(t *testing.T) {
	r := newRoster(t, 4)
	a := spawn(t, r, "add a test")
	if a.ID != "w1" || a.Status.Finished() {
		t.Fatalf("spawn answered %+v", a)
	}
	done, pending := wait(t, r, true, time.Minute, a.ID)
	if len(done) != 1 || len(pending) != 0 {
		t.Fatalf("done %v pending %v", done, pending)
	}
	d := done[0]
	if d.Status != Succeeded || !strings.Contains(d.Result, "done (w1 t fast): add a test") || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Fatalf("result %+v", d)
	}
	if body, err := os.ReadFile(d.ResultFile); err != nil || !strings.Contains(string(body), "add a test") {
		t.Fatalf("result file %q: %v", d.ResultFile, err)
	}
}

// A result that arrived while nobody waited is listed as unread and read
// by a later wait; the journal records it.
func TestResultNobodyWaitedFor(t *testing.T) {
	r := newRoster(t, 4)
	a := spawn(t, r, "quick")
	until(t, r, "an unread result", hasUnread(r))
	if u := r.Unread(); len(u) != 1 || u[0] != a.ID {
		t.Fatalf("unread %v", u)
	}
	if l := r.List(); l[0].Status != Succeeded || !strings.Contains(l[0].Result, "quick") {
		t.Fatalf("list %+v", l)
	}
	done, _ := wait(t, r, false, time.Second, a.ID)
	if len(done) != 1 || len(r.Unread()) != 0 {
		t.Fatalf("after the wait: done %v, unread %v", done, r.Unread())
	}
	journal, _ := os.ReadFile(filepath.Join(r.cfg.StateDir, "workers", a.ID, "worker.json"))
	if !strings.Contains(string(journal), `"status": "succeeded"`) || !strings.Contains(string(journal), "result_file") || !strings.Contains(string(journal), `"unread": false`) {
		t.Fatalf("journal: %s", journal)
	}
}

func TestWaitAnyAllAndTimeout(t *testing.T) {
	r := newRoster(t, 4)
	fast := spawn(t, r, "now")
	slow := spawn(t, r, "sleep 1.5")
	done, pending := wait(t, r, false, time.Minute, fast.ID, slow.ID)
	if len(done) != 1 || done[0].ID != fast.ID || len(pending) != 1 {
		t.Fatalf("any: done %v pending %v", done, pending)
	}
	done, pending = wait(t, r, true, 100*time.Millisecond, fast.ID, slow.ID)
	if len(pending) != 1 || pending[0] != slow.ID {
		t.Fatalf("all with a short timeout: done %v pending %v", done, pending)
	}
	if st := r.List()[1].Status; st != Running {
		t.Fatalf("a wait's timeout changed the worker: %s", st)
	}
	done, pending = wait(t, r, true, time.Minute, fast.ID, slow.ID)
	if len(done) != 2 || len(pending) != 0 {
		t.Fatalf("all: done %v pending %v", done, pending)
	}
}

func TestFailureEmptyJSONAndFlood(t *testing.T) {
	r := newRoster(t, 4)
	fail := spawn(t, r, "fail please")
	empty := spawn(t, r, "empty")
	js := spawn(t, r, "json")
	flood := spawn(t, r, "flood")
	done, _ := wait(t, r, true, time.Minute, fail.ID, empty.ID, js.ID, flood.ID)
	by := map[string]Info{}
	for _, d := range done {
		by[d.ID] = d
	}
	if f := by[fail.ID]; f.Status != Failed || f.ExitCode == nil || *f.ExitCode != 3 || !strings.Contains(f.Stderr, "something broke") {
		t.Errorf("failing worker: %+v", f)
	}
	if e := by[empty.ID]; e.Status != Failed || !strings.Contains(e.Why, "without a final result") {
		t.Errorf("a worker with no result: %+v", e)
	}
	// A plain record's cost is not read (R6): only an agent's stream,
	// which the command line names, says what a run cost.
	if j := by[js.ID]; j.Status != Succeeded || j.Result != "all green" || j.Usage == nil || j.Usage.OutputTokens != 34 || j.Usage.CostUSD != 0 || j.Usage.Model != "m-1" {
		t.Errorf("JSON lines: %+v (usage %+v)", j, j.Usage)
	}
	if fl := by[flood.ID]; fl.Status != Succeeded || !fl.Truncated || len([]rune(fl.Result)) != 500 {
		t.Errorf("flood: truncated=%v len=%d", fl.Truncated, len(fl.Result))
	} else if body, _ := os.ReadFile(fl.ResultFile); !strings.Contains(string(body), "line 2999") {
		t.Errorf("the full result is not in %s", fl.ResultFile)
	}
}

func TestTimeoutKeepsPartialOutput(t *testing.T) {
	r := newRoster(t, 4)
	in, err := r.Spawn(SpawnRequest{Brief: "sleep 30", Timeout: time.Second}) // time for sh to print, on a busy machine
	if err != nil {
		t.Fatal(err)
	}
	done, _ := wait(t, r, true, time.Minute, in.ID)
	if d := done[0]; d.Status != TimedOut || !strings.Contains(d.Result, "working") {
		t.Fatalf("timeout: %+v", d)
	}
}

// kill ends the worker's whole process group: no child is left behind.
func TestKillLeavesNoOrphan(t *testing.T) {
	r := newRoster(t, 4)
	pidFile := filepath.Join(t.TempDir(), "child")
	t.Setenv("VIBE_TEST_CHILD_PID", pidFile)
	in := spawn(t, r, "child")
	pid := testenv.PidFile(t, pidFile)
	k, stopped, err := r.Kill(in.ID)
	if err != nil || k.Status != Killed || !stopped || !strings.Contains(k.Result, "started a child") || !strings.Contains(k.Why, "vibe_kill stopped it while it ran") {
		t.Fatalf("kill: %+v stopped=%v %v", k, stopped, err)
	}
	if !testenv.Gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the worker's child %d outlived the kill", pid)
	}
	// Issue 19: a second kill says it stopped nothing.
	if again, stopped, err := r.Kill(in.ID); err != nil || again.Status != Killed || stopped {
		t.Fatalf("a second kill: %+v stopped=%v %v", again, stopped, err)
	}
}

func TestSendRestartsWithTheAppendedBrief(t *testing.T) {
	r := newRoster(t, 4)
	in := spawn(t, r, "sleep 30")
	working(t, r, 0)
	got, restarted, err := r.Send(in.ID, "stop sleeping, just answer")
	if err != nil || !restarted || got.Runs != 2 {
		t.Fatalf("send: %+v restarted=%v %v", got, restarted, err)
	}
	// The appended brief still says "sleep 30": the worker sleeps again;
	// a send to a finished worker just runs it again.
	k, _, _ := r.Kill(in.ID)
	if !strings.Contains(k.Brief, "stop sleeping") {
		t.Fatalf("brief after send: %q", k.Brief)
	}
	q := spawn(t, r, "first")
	wait(t, r, true, time.Minute, q.ID)
	got, restarted, err = r.Send(q.ID, "second")
	if err != nil || restarted {
		t.Fatalf("send to a finished worker: %v %v", restarted, err)
	}
	done, _ := wait(t, r, true, time.Minute, q.ID)
	if !strings.Contains(done[0].Result, "first  second") || done[0].Runs != 2 {
		t.Fatalf("second run: %+v", done[0])
	}
}

func TestBadInput(t *testing.T) {
	r := newRoster(t, 2)
	if _, err := r.Spawn(SpawnRequest{Brief: "  "}); err == nil || !strings.Contains(err.Error(), "brief is empty") {
		t.Errorf("empty brief: %v", err)
	}
	if _, err := r.Spawn(SpawnRequest{Brief: "x", Tier: "turbo"}); err == nil || !strings.Contains(err.Error(), "fast, good") {
		t.Errorf("unknown tier: %v", err)
	}
	if _, _, err := r.Kill("w9"); err == nil || !strings.Contains(err.Error(), "no workers yet") {
		t.Errorf("unknown id, none spawned: %v", err)
	}
	spawn(t, r, "now")
	if _, _, err := r.Send("w7", "hi"); err == nil || !strings.Contains(err.Error(), "the workers are w1") {
		t.Errorf("unknown id: %v", err)
	}
	bad, err := New(Config{StateDir: t.TempDir(), Backends: map[string]runner.Backend{"fast": runner.Command{Line: "no-such-agent-cli --print"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Spawn(SpawnRequest{Brief: "x"}); err == nil || !strings.Contains(err.Error(), "no-such-agent-cli") {
		t.Errorf("a missing program: %v", err)
	}
}

// Close stops running and queued workers and waits for them.
func TestCloseWithWorkersRunning(t *testing.T) {
	r := newRoster(t, 1)
	spawn(t, r, "sleep 30")
	spawn(t, r, "sleep 30")
	working(t, r, 0)
	r.Close()
	// Stopped, not waited for: a worker that ran to its end would have
	// printed "done".
	for i, w := range r.List() {
		why := []string{"the run closed while it ran", "the run closed before it started"}[i]
		if w.Status != Killed || !strings.HasPrefix(w.Why, why) || strings.Contains(w.Result, "done") {
			t.Errorf("%s after Close: %s, %q, result %q", w.ID, w.Status, w.Why, w.Result)
		}
	}
}

func TestManyWorkersAtOnce(t *testing.T) {
	r := newRoster(t, 4)
	var wg sync.WaitGroup
	ids := make([]string, 40)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			in, err := r.Spawn(SpawnRequest{Brief: "job " + strconv.Itoa(i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = in.ID
			r.List()
			r.Unread()
		}(i)
	}
	wg.Wait()
	done, pending := wait(t, r, true, time.Minute, ids...)
	if len(done) != 40 || len(pending) != 0 {
		t.Fatalf("done %d pending %v", len(done), pending)
	}
	for _, d := range done {
		if d.Status != Succeeded {
			t.Errorf("%s: %s %s", d.ID, d.Status, d.Why)
		}
	}
}

// A worker whose process dies of a signal nobody here sent is lost, not
// failed or succeeded.
func TestLostWorker(t *testing.T) {
	r := newRoster(t, 4)
	pidFile := filepath.Join(t.TempDir(), "pid")
	in, err := r.Spawn(SpawnRequest{Brief: "x"})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, r, true, time.Minute, in.ID)
	// A command that records its own pid and then sleeps.
	lost, err := New(Config{StateDir: t.TempDir(), Dir: t.TempDir(),
		Backends: map[string]runner.Backend{"fast": runner.Command{Line: "echo $$ > " + pidFile + "; exec sleep 30"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close()
	w, err := lost.Spawn(SpawnRequest{Brief: "x"})
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(testenv.PidFile(t, pidFile), syscall.SIGKILL)
	done, _ := wait(t, lost, true, time.Minute, w.ID)
	if done[0].Status != Lost || !strings.Contains(done[0].Why, "signal") {
		t.Fatalf("a worker killed from outside: %+v", done[0])
	}
}

// A result whose file cannot be written is kept whole, not cut.
func TestResultKeptWhenItsFileFails(t *testing.T) {
	r := newRoster(t, 1)
	// The state folder becomes a plain file: the journal stays open, the
	// result file cannot be made.
	if err := os.RemoveAll(r.cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.cfg.StateDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fl := spawn(t, r, "flood")
	done, _ := wait(t, r, true, time.Minute, fl.ID)
	if len(done) != 1 || done[0].Truncated || done[0].ResultFile != "" || !strings.Contains(done[0].Result, "line 2999") {
		t.Fatalf("result without its file: %+v", done)
	}
}

// A wait with no ids waits for what has not been answered: a result that
// was read is never the answer again, so an orchestrator's loop blocks
// until the next worker ends instead of spinning; with nothing left, it
// says so.
func TestWaitWithNoIDsSkipsReadResults(t *testing.T) {
	r := newRoster(t, 4)
	fast := spawn(t, r, "now")
	if done, _ := wait(t, r, false, time.Minute); len(done) != 1 || done[0].ID != fast.ID {
		t.Fatalf("first wait: %v", done)
	}
	slow := spawn(t, r, "sleep 0.5")
	done, pending := wait(t, r, false, time.Minute)
	if len(done) != 1 || done[0].ID != slow.ID || len(pending) != 0 {
		t.Fatalf("second wait returned %v (pending %v), want only %s", done, pending, slow.ID)
	}
	if _, _, err := r.Wait(context.Background(), WaitRequest{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "read already") {
		t.Fatalf("with every result read: %v", err)
	}
}

// sharedState is a state folder and a way to open rosters over it, which
// the test closes itself.
func sharedState(t *testing.T) (string, func() *Roster) {
	script, _ := filepath.Abs("testdata/worker.sh")
	state := filepath.Join(t.TempDir(), "root-state")
	cfg := Config{StateDir: state, Dir: t.TempDir(), Backends: map[string]runner.Backend{"fast": runner.Command{Line: script}}}
	return state, func() *Roster {
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// Issue 19 §4: a state folder left with nothing in it (every result read,
// no worktree) is emptied when the last roster over it closes, but for the
// last id given and the root's name (issue 26); one with an unread result
// stays, and Close says why.
func TestCloseRemovesTheIdleStateFolder(t *testing.T) {
	state, open := sharedState(t)
	a, b := open(), open()
	in := spawn(t, a, "read me")
	wait(t, a, true, time.Minute, in.ID)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(a.Kept()) != 0 {
		t.Fatalf("kept %+v", a.Kept())
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("the folder went while another roster used it: %v", err)
	}
	b.Close()
	if ents, _ := os.ReadDir(state); len(ents) != 2 || ents[0].Name() != statedir.LastIDName || ents[1].Name() != statedir.RootName {
		t.Fatalf("the idle state folder holds %v", ents)
	}
	c := open()
	in = spawn(t, c, "not read")
	until(t, c, "an unread result", hasUnread(c))
	c.Close()
	if k := KeptText(c.Kept()); !strings.Contains(k, `w2 "t" (succeeded): its result was not read`) {
		t.Fatalf("kept: %q", k)
	}
	if _, err := os.Stat(filepath.Join(state, "workers", "w2", "worker.json")); err != nil {
		t.Fatalf("the unread record: %v", err)
	}
	d := open()
	defer d.Close()
	if done, _ := wait(t, d, true, time.Second, "w2"); done[0].Result != "done (w2 t fast): not read" {
		t.Fatalf("the next roster's result: %+v", done[0])
	}
}

// Issue 26: a worker id names one worker over a root, never two: each
// roster over a state folder goes on from the highest id any earlier one
// gave, also after Close removed the records of read workers, and after
// the folder was left idle (all that stays of it is that id and the
// root's name).
func TestIDsGoOnAcrossRosters(t *testing.T) {
	state, open := sharedState(t)
	a := open()
	kept, read := spawn(t, a, "kept"), spawn(t, a, "read")
	wait(t, a, true, time.Minute, read.ID)
	until(t, a, "an unread result", hasUnread(a))
	a.Close()
	if kept.ID != "w1" || read.ID != "w2" || len(a.Kept()) != 1 {
		t.Fatalf("first roster: %s %s, kept %+v", kept.ID, read.ID, a.Kept())
	}
	b := open()
	if in := spawn(t, b, "next"); in.ID != "w3" {
		t.Fatalf("the next roster's first worker is %s, want w3 (w2 was the last roster's)", in.ID)
	}
	wait(t, b, true, time.Minute, "w1", "w3")
	b.Close()
	ents, _ := os.ReadDir(state)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "last-id root" {
		t.Fatalf("the idle state folder holds %v", names)
	}
	c := open()
	defer c.Close()
	if in := spawn(t, c, "after idle"); in.ID != "w4" {
		t.Fatalf("after the folder went idle the next worker is %s, want w4", in.ID)
	}
}
