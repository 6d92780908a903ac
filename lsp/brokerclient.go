package lsp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
	"github.com/builtin-tools/builtin-tools/lsp/brokered"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/viewlock"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// serverProc is a server's process as a Supervisor sees it: its own child
// (proc.Process) or a server the broker holds (brokered.Proc).
type serverProc interface {
	Pid() int
	Kill() error
	Wait() error
	Tail() *proc.Tail
}

// stoppedIdle reports whether the broker stopped s for its idle time
// (no crash: the next call starts it again, as after a pool's reap).
func (s *server) stoppedIdle() bool {
	bp, ok := s.proc.(*brokered.Proc)
	return ok && bp.StoppedIdle()
}

// perShell are variables that differ between processes of one user
// without changing what a server does (the shell's, and internal/proc's
// tag, which the broker's own start sets): left out of a hello, so they
// do not keep processes from sharing.
var perShell = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true, "BUILTIN_TOOLS_PROC": true}

// startViaBroker asks the broker for l's server.
func startViaBroker(ctx context.Context, cfg *Config, spec *langserver.Spec, l *start) (*brokered.Proc, error) {
	if l.joinOnly {
		return brokered.Open(ctx, cfg.Broker, nil, broker.Hello{Server: spec.ID, Dir: l.Root, Trusted: l.Trusted, Warm: l.warm})
	}
	h := broker.Hello{Server: spec.ID, Bin: l.Bin, Dir: l.Root, Trusted: l.Trusted, IdleMS: cfg.IdleTimeout.Milliseconds(), Warm: l.warm}
	sub := func(s string) string { return strings.ReplaceAll(s, l.StateDir, broker.StateToken) }
	for _, a := range l.Args {
		h.Args = append(h.Args, sub(a))
	}
	env := l.Env
	if env == nil {
		// What a child of this process would inherit, not the broker's.
		env = os.Environ()
	}
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if perShell[name] {
			continue
		}
		h.Env = append(h.Env, sub(e))
	}
	if ents, err := os.ReadDir(l.StateDir); err == nil {
		for _, e := range ents {
			if data, err := os.ReadFile(filepath.Join(l.StateDir, e.Name())); err == nil && e.Type().IsRegular() {
				if h.Files == nil {
					h.Files = map[string]string{}
				}
				h.Files[e.Name()] = strings.ReplaceAll(string(data), l.StateDir, broker.StateToken)
			}
		}
	}
	h.Init, _ = json.Marshal(l.InitializationOptions)
	if spec.LoadedLog != nil {
		h.Loaded = spec.LoadedLog.String()
	}
	h.Settings, _ = json.Marshal(spec.Settings)
	return brokered.Open(ctx, cfg.Broker, cfg.BrokerCommand, h)
}

// holdAlone takes the server's view alone (a preview): of the calls of
// this process, and through the broker of every other process.
func (s *server) holdAlone(ctx context.Context, bound time.Duration) error {
	if err := s.view.LockAlone(ctx, bound); err != nil {
		return err
	}
	if _, ok := s.proc.(*brokered.Proc); ok {
		hctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		if err := s.conn.Call(hctx, "$/builtintools/hold", nil, nil); err != nil {
			s.view.UnlockAlone()
			if hctx.Err() != nil && ctx.Err() == nil {
				return viewlock.ErrBusy
			}
			return err
		}
	}
	return nil
}

// unholdAlone ends holdAlone.
func (s *server) unholdAlone() {
	if _, ok := s.proc.(*brokered.Proc); ok {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
		_ = s.conn.Notify(ctx, "$/builtintools/release", nil)
		cancel()
	}
	s.view.UnlockAlone()
}

// processes asks the broker how many connections (processes, one per
// pool) share the server; 0 for a server of this process's own.
func (s *server) processes(ctx context.Context) int {
	if _, ok := s.proc.(*brokered.Proc); !ok || !s.Alive() {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var res struct {
		Clients int `json:"clients"`
	}
	if s.conn.Call(ctx, "$/builtintools/clients", nil, &res) != nil {
		return 0
	}
	return res.Clients
}

// brokerServers asks the broker, through s's connection, for every
// server it holds; nil for a server of this process's own.
func (s *server) brokerServers(ctx context.Context) *broker.Servers {
	if _, ok := s.proc.(*brokered.Proc); !ok || !s.Alive() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var res broker.Servers
	if s.conn.Call(ctx, "$/builtintools/servers", nil, &res) != nil {
		return nil
	}
	return &res
}

// peerGone reports, for a server reached through the broker, whether the
// broker has closed the connection though this process's read of it has
// not seen the end yet (a broker just killed): the caller then ends the
// server here, so the call starts afresh instead of failing on it.
func (s *server) peerGone() bool {
	bp, ok := s.proc.(*brokered.Proc)
	if !ok || !bp.PeerGone() {
		return false
	}
	bp.Kill()
	lifetime.Await(context.Background(), s.exited, time.Second)
	return true
}

// warmKey names at the broker the server a start of c asks for, worked
// out without the toolchain pins, the probe or the spec's Prepare (which
// take a process's first call hundreds of milliseconds: they ask the
// managers and run the program): the row and its hooks, the program's
// file, the root, the trust, this process's environment as its child
// gets it less the pins (toolenv.Env.Inputs, less the per-shell
// variables), the managers' global settings, of which the pins are a
// function, and the state of the files Prepare reads (preparedFrom).
// A process whose server runs warm under it joins it with
// none of them, as a run of one process joins its pool's; one whose
// default toolchain changed meanwhile names another server, and starts it.
func (la *launcher) warmKey(c *choice) string {
	spec := c.spec
	var size int64
	var mtime time.Time
	if info, err := os.Stat(c.bin); err == nil {
		size, mtime = info.Size(), info.ModTime()
	}
	loaded := ""
	if spec.LoadedLog != nil {
		loaded = spec.LoadedLog.String()
	}
	var env []string
	inputs, sources := la.env.Inputs()
	for _, e := range inputs {
		if name, _, _ := strings.Cut(e, "="); !perShell[name] {
			env = append(env, e)
		}
	}
	gowork, _ := la.env.GoWork(c.root)
	data := map[string]any{
		"id": spec.ID, "command": spec.Command, "bin": c.bin, "size": size, "mtime": mtime, "root": c.root,
		"trusted": la.cfg.Trusted, "env": env, "gowork": gowork, "uid": os.Getuid(), "pins": sources,
		"indexes": spec.Indexes, "once": spec.PublishesOnce, "loaded": loaded, "settings": spec.Settings,
		"init": spec.InitializationOptions, "hooks": []string{funcName(spec.Prepare), funcName(spec.Pull)},
		"prepared": la.preparedFrom(c),
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return "" // options that cannot be compared: no warm join
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// funcName names a hook for warmKey: its address may differ between
// processes of one program.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.IsNil() {
		return ""
	}
	if fn := runtime.FuncForPC(v.Pointer()); fn != nil {
		return fn.Name()
	}
	return "?"
}

// warmProbed holds the warm keys a broker has answered for: their
// program runs, and needs no probe in this process.
var warmProbed sync.Map

// runsWarm reports whether the broker runs c's server warm for another
// process (asked once per key while it does not): then the program
// evidently runs, and choose need not probe it.
func (la *launcher) runsWarm(c *choice) bool {
	if la.cfg.Broker == "" {
		return false
	}
	key := la.warmKey(c)
	if key == "" {
		return false
	}
	if _, ok := warmProbed.Load(key); ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	bp, err := brokered.Open(ctx, la.cfg.Broker, nil, broker.Hello{Server: c.spec.ID, Dir: c.root, Trusted: la.cfg.Trusted, Warm: key, Ask: true})
	if err != nil {
		return false
	}
	bp.Kill()
	warmProbed.Store(key, true)
	return true
}

// joinWarm joins the server the broker runs warm under c's warmKey, or
// fails: the caller then starts one in full.
func (la *launcher) joinWarm(ctx context.Context, c *choice, g *pathguard.Guard, relRoot string, relText func(string) string) (*server, error) {
	key := la.warmKey(c)
	if key == "" {
		return nil, errors.New("no warm name")
	}
	stateDir, err := proc.TempDir("lsp-" + strings.ReplaceAll(c.spec.ID, string(filepath.Separator), "_") + "-")
	if err != nil {
		return nil, err
	}
	l := &start{Launch: langserver.Launch{Bin: c.bin, Root: c.root, Trusted: la.cfg.Trusted, StateDir: stateDir, Guard: g,
		InitializationOptions: c.spec.InitializationOptions}, warm: key, joinOnly: true}
	return startServer(ctx, c.spec, l, relRoot, la.cfg, la.hooks, relText)
}
