package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// N6 and N10: what a server's start reads of the checkout, and the root
// markers, go through the run's guard: a named pipe would block the read
// forever, a link to /dev/zero would grow memory until the OOM killer, and
// a link out of the root reads a file outside it. Each is answered at
// once, saying what the file is.

// badFile makes name under root the bad kind of file kind names.
func badFile(t *testing.T, root, name, kind string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(p), 0o755)
	switch kind {
	case "fifo":
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			testenv.Unavailable(t, "named pipes", err)
		}
		// Nobody writes to it; should a read block on it anyway, the test
		// ends it by opening and closing the write end.
		t.Cleanup(func() { releaseFIFO(p) })
	case "devzero":
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	case "outside":
		out := filepath.Join(resolved(t), filepath.Base(name))
		text := "module example.com/outside\n\ngo 1.22\n"
		if strings.HasSuffix(name, ".json") {
			text = `[{"directory": "/", "file": "/x.c", "command": "cc -c /x.c"}]`
		}
		os.WriteFile(out, []byte(text), 0o644)
		if err := os.Symlink(out, p); err != nil {
			t.Fatal(err)
		}
	}
}

// releaseFIFO unblocks a reader of the named pipe at p, if there is one.
func releaseFIFO(p string) {
	if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

var badKinds = map[string]string{
	"fifo":    "is a named pipe, not a regular file",
	"devzero": "is a symbolic link that leads outside the root",
	"outside": "is a symbolic link that leads outside the root",
}

// quickly runs f, failing t if it takes more than a minute (it would
// otherwise hang the test binary).
func quickly(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", what)
		return nil
	}
}

// N6: clangd's compilation database, in the root or in build/.
func TestClangdCompileCommandsMustBeARegularFileInTheRoot(t *testing.T) {
	t.Parallel()
	testenv.LookPath(t, "clangd")
	for _, name := range []string{"compile_commands.json", "build/compile_commands.json"} {
		for kind, want := range badKinds {
			t.Run(name+" "+kind, func(t *testing.T) {
				t.Parallel()
				root := resolved(t)
				plant(t, root, "", map[string]string{"CMakeLists.txt": "project(x C)\n", "a.c": "int hello(void) { return 1; }\n"})
				badFile(t, root, name, kind)
				sup := NewSupervisor(root, Config{})
				defer sup.Close()
				err := quickly(t, "hover", func() error {
					_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.c")), protocol.Place{Line: 1, Symbol: "hello"})
					return err
				})
				expectErr(t, "hover", err, nil, "clangd was not started", name+" "+want, "replace it with the real compilation database, or remove it")
			})
		}
	}
}

// N10 (and N6 for a database that is the only marker): a root marker
// counts only as a regular file, or a folder, inside the root.
func TestRootMarkerMustBeARegularFileInTheRoot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ program, marker, file, symbol string }{
		{"gopls", "go.mod", "main.go", "main"},
		{"clangd", "compile_commands.json", "a.c", "hello"},
	} {
		for kind, want := range badKinds {
			t.Run(c.marker+" "+kind, func(t *testing.T) {
				t.Parallel()
				testenv.LookPath(t, c.program)
				root := resolved(t)
				plant(t, root, "", map[string]string{"main.go": "package main\n\nfunc main() {}\n", "a.c": "int hello(void) { return 1; }\n"})
				badFile(t, root, c.marker, kind)
				sup := NewSupervisor(root, Config{})
				defer sup.Close()
				err := quickly(t, "hover", func() error {
					_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, c.file)), protocol.Place{Line: 1, Symbol: c.symbol})
					return err
				})
				expectErr(t, "hover", err, ErrUnavailable, "found "+c.marker+", which does not count as a root marker", "it "+want,
					"replace it with the real file, or remove it")
				if len(sup.fleet.running()) != 0 {
					t.Error("a server was started for it")
				}
				row := statusRow(t, sup.Status(t.Context()), c.program)
				if len(row.MarkerDirs) != 0 {
					t.Errorf("status counts it as a marker: %+v", row)
				}
			})
		}
	}
}

// Close is bounded even while a start is stuck in a preparation that does
// not watch its cancellation (here it blocks opening a named pipe nobody
// writes to, as os.ReadFile of compile_commands.json did).
func TestCloseDuringAHungPreparation(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	fifo := filepath.Join(resolved(t), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		testenv.Unavailable(t, "named pipes", err)
	}
	entered := make(chan struct{})
	marker := filepath.Join(resolved(t), "started")
	spec := fakeSpec(t, "mute")
	spec.Command = []string{"/bin/sh", "-c", "echo started >> " + marker + "; exec " + spec.Command[0] + " " + spec.Command[1]}
	spec.Prepare = func(*langserver.Launch) error {
		close(entered)
		_, err := os.ReadFile(fifo) // blocks until the test releases it
		return err
	}
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}})
	hover := make(chan error, 1)
	go func() {
		_, err := sup.Hover(context.Background(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
		hover <- err
	}()
	<-entered
	closed := make(chan struct{})
	go func() { sup.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		releaseFIFO(fifo)
		t.Fatal("Close did not return within a minute of a start stuck in its preparation")
	}
	select {
	case err := <-hover:
		if !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
			t.Errorf("the call waiting for the start: want it ended by Close, got %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("the call waiting for the stuck start did not end with Close")
	}
	// The preparation ends; the start then starts nothing.
	releaseFIFO(fifo)
	if quickly(t, "the start", func() error { sup.fleet.wg.Wait(); return nil }); readMarker(marker) != "" {
		t.Fatal("a server was started after Close")
	}
}

// clangd reads the copy of compile_commands.json its start made, never the
// file itself. After the database is written again (cmake run anew), the
// server prepared from the old copy is not kept by the runs that hold it,
// nor joined by another run of the pool or, through the broker, of
// another process: their next call starts one from the new database,
// which they share. Before, both went on checking with the old flags.
func TestClangdSeesANewCompilationDatabase(t *testing.T) {
	testenv.LookPath(t, "clangd")
	for _, viaBroker := range []bool{false, true} {
		name := "pool"
		if viaBroker {
			name = "broker"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := resolved(t)
			database := func(flags string) string {
				return `[{"directory": "` + root + `", "file": "a.c", "command": "cc ` + flags + ` -c a.c"}]`
			}
			plant(t, root, "", map[string]string{
				"a.c":                   "#ifndef FOO\n#error FOO is not defined\n#endif\nint hello(void) { return 1; }\n",
				"compile_commands.json": database(""),
			})
			cfgA, cfgB := Config{Pool: pool.New()}, Config{}
			cfgB.Pool = cfgA.Pool
			if viaBroker {
				dir := filepath.Join(t.TempDir(), "broker")
				startBroker(t, dir)
				cfgA.Broker, cfgB.Broker, cfgB.Pool = dir, dir, pool.New()
			}
			a, b := NewSupervisor(root, cfgA), NewSupervisor(root, cfgB)
			t.Cleanup(func() { a.Close(); b.Close() })
			undefined := func(sup *Supervisor) bool {
				d := must(sup.Diagnostics(t.Context(), loc(t, sup, filepath.Join(root, "a.c"))))(t)
				for _, f := range d.Diagnostics {
					if strings.Contains(f.Message, "FOO is not defined") {
						return true
					}
				}
				return false
			}
			pid := func(sup *Supervisor) int { return sup.fleet.running()[0].PID() }
			if !undefined(a) || !undefined(b) {
				t.Fatal("without -DFOO in the database, a.c's #error is not reported")
			}
			if pid(a) != pid(b) {
				t.Fatalf("the two runs started two servers: %d and %d", pid(a), pid(b))
			}
			old := pid(a)
			plant(t, root, "", map[string]string{"compile_commands.json": database("-DFOO")})
			if undefined(a) {
				t.Error("the run that held the server still checks with the old database")
			}
			if undefined(b) {
				t.Error("the other run still checks with the old database")
			}
			if pid(a) == old || pid(a) != pid(b) {
				t.Errorf("servers after the change: %d and %d (before: %d); want one new server for both", pid(a), pid(b), old)
			}
		})
	}
}

// The rule rust-analyzer's Prepare applies in an untrusted checkout (no
// cargo configuration, which can name programs for cargo to run) holds
// for a configuration written after the start too: the next call finds
// the server's preparation out of date, starts it again, and that start
// is refused. The row is rust-analyzer's, run by a fake program (no
// rust-analyzer here).
func TestCargoConfigWrittenAfterTheStart(t *testing.T) {
	t.Parallel()
	var spec langserver.Spec
	for _, s := range langserver.Table() {
		if s.ID == "rust-analyzer" {
			spec = s
		}
	}
	fake := fakeSpec(t, "mute")
	spec.Command, spec.Probe = fake.Command, nil
	root := resolved(t)
	plant(t, root, "", map[string]string{"Cargo.toml": "[package]\nname = \"a\"\n", "src/main.rs": "fn main() {}\n"})
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, RequestTimeout: time.Second})
	defer sup.Close()
	hover := func() error {
		_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "src/main.rs")), protocol.Place{Line: 1, Symbol: "main"})
		return err
	}
	expectErr(t, "hover before", hover(), ErrServerTimeout) // started; the fake never answers
	if n := len(sup.fleet.running()); n != 1 {
		t.Fatalf("%d servers running, want 1", n)
	}
	plant(t, root, "", map[string]string{".cargo/config.toml": "[build]\nrustc-wrapper = \"./wrap.sh\"\n"})
	expectErr(t, "hover after", hover(), nil, "rust-analyzer was not started", "this untrusted checkout has .cargo/config.toml")
	if n := len(sup.fleet.running()); n != 0 {
		t.Errorf("%d servers running after the configuration was written, want 0", n)
	}
}
