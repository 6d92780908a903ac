# The Python kernel's driver (shipped inside builtin-tools). It talks to Go
# over two pipes of its own, passed as fds 3 (in) and 4 (out) and moved at
# once to private numbers above 200, close-on-exec, so that neither a cell
# writing to fd 4 by mistake nor a subprocess can reach them. Messages are
# JSON objects, one a line (each written with a newline before it, so junk
# on the pipe costs at most itself); every message names its cell, and tool
# calls carry an id. One thread at a time reads Go's messages — whichever
# is waiting for one, the main loop between cells or a tool() call — and
# hands each to its waiter by the id it names, so tool() works from any
# thread, and a cell's request reaches the main thread with no hand-off.
import _signal, select as _select, time as _time_mod, ast, base64, codecs, fcntl, hashlib, io, json, os, sys, threading, traceback, types


def _private(fd):
    try:
        new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200)
    except OSError:  # a low descriptor limit
        new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    return new


_IN, _OUT = _private(3), _private(4)
os.close(3)
os.close(4)
# The real stdout, where a cell's subprocesses write (their stderr joins
# it, in order): after a cell, when it still holds unread bytes, a mark
# goes down it, so Go knows where that cell's share ends.
_FD1 = _private(1)
os.dup2(1, 2)
_MARK = (sys.argv[1] if len(sys.argv) > 1 else "").encode()
_CHUNK = 1 << 20  # characters per message: far under Go's line cap

# The checkout comes first on sys.path, as with `python -c` and IPython, so
# its own packages import; the driver's folder (sys.path[0] of a script)
# is not on it at all.
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.getcwd()
sys.path[:] = [_ROOT] + [p for p in sys.path if p and os.path.abspath(p) != _HERE and os.path.abspath(p) != os.getcwd()]

_MAIN = threading.get_ident()
_PID = os.getpid()
_child = False  # this is a process a cell forked, not the kernel
_cell = None  # the running cell's number
_last = 0  # the last cell run
_send_lock = threading.RLock()
# While the main thread is inside the protocol (sending, or waiting for and
# reading messages), an interrupt is held until it is out: a message half
# written, or read but not handed over, would be lost with the next one.
_main_sending = False
_main_awaiting = False
_pending_interrupt = False
_ack_owed = False


def _write_all(fd, data):
    n = os.write(fd, data)
    if n < len(data):
        view = memoryview(data)[n:]
        while view:
            view = view[os.write(fd, view) :]


_NONE = bytes(4)
_FIONREAD = 0x541B if sys.platform.startswith("linux") else 0x4004667F  # termios.FIONREAD, without the import


def _unread(fd):
    try:
        return fcntl.ioctl(fd, _FIONREAD, _NONE) != _NONE
    except OSError:
        return True


def _held_interrupt():
    """Raise the interrupt held while the main thread was in the protocol,
    saying it was taken first if that is still owed."""
    global _pending_interrupt, _ack_owed
    if _pending_interrupt and not _main_sending and not _main_awaiting:
        _pending_interrupt = False
        if _ack_owed and _cell is not None:
            _ack_owed = False
            _send({"type": "interrupted", "cell": _cell})
        raise KeyboardInterrupt


def _send(msg):
    global _main_sending, _pending_interrupt
    if _child:
        # The channel is the kernel's: a forked child prints to its own
        # pipe and sends nothing else.
        if msg.get("type") == "stream":
            sys.stdout.write(msg.get("text", ""))
        return
    data = b"\n" + json.dumps(msg, default=repr).encode() + b"\n"
    main = threading.get_ident() == _MAIN
    with _send_lock:
        if main:
            _main_sending = True
        try:
            _write_all(_OUT, data)
        except OSError:
            os._exit(1)  # Go is gone
        finally:
            if main:
                _main_sending = False
    if main and _pending_interrupt:
        _held_interrupt()


_cv = threading.Condition(threading.Lock())
_reading = False  # a thread is reading the channel
_pieces = []  # what was read of a line not yet complete
_execute = []  # execute requests, for the main loop
_replies = {}  # tool call id → its reply, None while it is awaited


def _dispatch(line):
    try:
        msg = json.loads(line)
    except ValueError:
        return
    kind = msg.get("type")
    if kind == "tool_result":
        if msg.get("id") in _replies:
            _replies[msg["id"]] = msg
    elif kind == "execute":
        _execute.append(msg)


def _await(ready):
    """The message ready() finds, reading the channel meanwhile when no
    other thread does."""
    global _reading, _main_awaiting
    if _child:
        raise RuntimeError("a forked child process cannot read the kernel's channel")
    main = threading.get_ident() == _MAIN
    if main:
        _main_awaiting = True
    try:
        with _cv:
            while True:
                got = ready()
                if got is not None:
                    return got
                if not _reading:
                    _reading = True
                    break
                _cv.wait()
        try:
            while True:
                try:
                    chunk = os.read(_IN, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    os._exit(0)  # Go closed the channel: the kernel's end
                _pieces.append(chunk)
                if b"\n" not in chunk:
                    continue
                lines = b"".join(_pieces).split(b"\n")
                _pieces[:] = [lines.pop()]
                with _cv:
                    for line in lines:
                        if line.strip():
                            _dispatch(line)
                    got = ready()
                    if got is not None:
                        return got
                    _cv.notify_all()
        finally:
            with _cv:
                _reading = False
                _cv.notify_all()
    finally:
        if main:
            _main_awaiting = False
            _held_interrupt()


def _next_execute():
    return _execute.pop(0) if _execute else None


def _on_sigint(signum, frame):
    global _pending_interrupt, _ack_owed
    if _cell is None:
        return  # a late interrupt, after its cell ended
    if _main_sending:
        _pending_interrupt = _ack_owed = True  # said and raised once the message is out
        return
    _send({"type": "interrupted", "cell": _cell})
    if _main_awaiting:
        _pending_interrupt = True
        return
    raise KeyboardInterrupt


_signal.signal(_signal.SIGINT, _on_sigint)


def _cell_of():
    """The cell the calling thread works for: the thread's own (set when it
    started, or while it runs work a cell submitted), else the running one."""
    c = getattr(threading.current_thread(), "_bt_cell", None)
    return c or _cell or _last


def _emit(name, s):
    c = _cell_of()
    for i in range(0, len(s), _CHUNK):
        _send({"type": "stream", "cell": c, "name": name, "text": s[i : i + _CHUNK]})


def _parts(kind, cell, s):
    """s when it fits one message; else its parts go first, as kind messages."""
    if s is None or len(s) <= _CHUNK:
        return s
    for i in range(0, len(s), _CHUNK):
        _send({"type": kind, "cell": cell, "text": s[i : i + _CHUNK]})
    return None


class _Stream(io.TextIOBase):
    def __init__(self, name):
        self.name = name

    def writable(self):
        return True

    def write(self, s):
        if s:
            _emit(self.name, s)
        return len(s)

    def flush(self):
        pass


sys.stdout = _Stream("stdout")
sys.stderr = _Stream("stderr")
os.environ.setdefault("MPLBACKEND", "Agg")

# Threads a cell starts work for it: what they print and the tools they
# call are that cell's, also after it returned (when Go notes or refuses
# them instead of billing a later cell).
_thread_start = threading.Thread.start


def _start(self):
    if getattr(self, "_bt_cell", None) is None:
        self._bt_cell = _cell_of()
    return _thread_start(self)


threading.Thread.start = _start
_pools_patched = False


def _patch_pools():
    """Work submitted to a thread pool is the submitting cell's, whichever
    cell started the pool's threads."""
    global _pools_patched
    mod = sys.modules.get("concurrent.futures.thread")
    if _pools_patched or mod is None:
        return
    _pools_patched = True
    submit = mod.ThreadPoolExecutor.submit

    def _submit(self, fn, /, *args, **kwargs):
        cell = _cell_of()

        def work(*a, **k):
            t = threading.current_thread()
            prev = getattr(t, "_bt_cell", None)
            t._bt_cell = cell
            try:
                return fn(*a, **k)
            finally:
                t._bt_cell = prev

        return submit(self, work, *args, **kwargs)

    mod.ThreadPoolExecutor.submit = _submit


_shown = set()  # hashes of images shown in this cell


def _frame_markdown(df, rows=5):
    import pandas as pd
    shape = "%d rows × %d columns" % df.shape
    dtypes = ", ".join("%s: %s" % (c, t) for c, t in df.dtypes.astype(str).items())
    if len(df) > 2 * rows:
        part = pd.concat([df.head(rows), df.tail(rows)])
    else:
        part = df
    cols = [str(c) for c in part.columns]
    idx = [str(i) for i in part.index]
    lines = ["| | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for n, (i, row) in enumerate(zip(idx, part.itertuples(index=False))):
        if len(df) > 2 * rows and n == rows:
            lines.append("| … |" + " … |" * len(cols))
        cells = [str(v)[:40] for v in row]
        lines.append("| " + i + " | " + " | ".join(cells) + " |")
    return "DataFrame, %s\n%s\ndtypes: %s" % (shape, "\n".join(lines), dtypes)


def _figure_png(fig):
    w, h = fig.get_size_inches()
    dpi = min(100.0, (1_000_000 / max(w * h, 0.01)) ** 0.5)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def display(*objs):
    for obj in objs:
        mod = type(obj).__module__ or ""
        if mod.startswith("matplotlib") and hasattr(obj, "savefig"):
            png = _figure_png(obj)
            key = hashlib.sha256(png).hexdigest()
            if key not in _shown:
                _shown.add(key)
                _send({"type": "image", "cell": _cell_of(), "mime": "image/png", "data": base64.b64encode(png).decode()})
        elif mod.startswith("pandas") and type(obj).__name__ == "DataFrame":
            _emit("stdout", _frame_markdown(obj) + "\n")
        else:
            _emit("stdout", repr(obj) + "\n")


class ToolError(Exception):
    """A tool called from a cell failed; the message is the tool's."""


def tool(name, args=None):
    if _child:
        raise ToolError("tool() works only in the kernel's own process, not in a process a cell forked: call it before forking, or in the parent")
    call = next(_ids)
    with _cv:
        _replies[call] = None
    try:
        _send({"type": "tool_call", "cell": _cell_of(), "id": call, "name": name, "args": args or {}})
        msg = _await(lambda: _replies.pop(call) if _replies.get(call) is not None else None)
    finally:
        with _cv:
            _replies.pop(call, None)
    if msg.get("error"):
        raise ToolError(msg["error"])
    return msg.get("result")


_ids = iter(range(1, 1 << 62))


# Cells run in a real __main__ module, as in Jupyter, so that pickle finds
# what they define by name (multiprocessing sends a function defined in a
# cell to its workers that way). The driver's own module stays alive by
# its functions' globals, and this reference.
_driver = sys.modules["__main__"]
_main = types.ModuleType("__main__")
_ns = _main.__dict__
_ns.update({"display": display, "tool": tool, "ToolError": ToolError})
sys.modules["__main__"] = _main

# A cell that forks (os.fork, multiprocessing's fork start method) makes a
# process that holds the kernel's channel and would go back to the
# kernel's loop after the cell. The child closes the channel at once and
# ends where the cell ends (_child_end). What it prints goes down a pipe of
# its own to a thread of the kernel, which passes it on as output a line
# at a time, so the lines of several children never cut into each other
# (L-4); a child's children share its pipe.
_fork_pipes = {}  # forking thread → the pipe made for its child
_forwarding = set()  # read ends of children's pipes, read by threads
_forward_busy = set()  # those whose thread holds output not yet sent


class _PipeStream(io.TextIOBase):
    def __init__(self, fd):
        self.fd = fd

    def writable(self):
        return True

    def fileno(self):
        return self.fd

    def write(self, s):
        if s:
            try:
                _write_all(self.fd, s.encode("utf-8", "replace"))
            except OSError:
                pass
        return len(s)

    def flush(self):
        pass


def _before_fork():
    if not _child:
        try:
            _fork_pipes[threading.get_ident()] = os.pipe()
        except OSError:
            pass  # no pipe: the child prints to the kernel's stdout


def _after_fork_parent():
    p = _fork_pipes.pop(threading.get_ident(), None)
    if p is None:
        return
    os.close(p[1])
    _forwarding.add(p[0])
    # Not a thread of the running cell: what a child prints belongs to the
    # cell running when it arrives, as a subprocess's output does.
    _thread_start(threading.Thread(target=_forward, args=(p[0],), daemon=True, name="forked child's output"))


def _forward(fd):
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    buf = bytearray()
    while True:
        # Busy from before the read until what it read is sent, so that
        # _forwarded_drain sees the output either in the pipe or here.
        try:
            _select.select([fd], [], [])
        except OSError:
            pass
        _forward_busy.add(fd)
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        end = buf.rfind(b"\n") + 1
        if end == 0 and len(buf) >= _CHUNK:
            end = len(buf)
        if end:
            _emit("stdout", dec.decode(bytes(buf[:end])))
            del buf[:end]
        _forward_busy.discard(fd)
    rest = dec.decode(bytes(buf), final=True)
    if rest:
        _emit("stdout", rest)
    _forwarding.discard(fd)
    os.close(fd)
    _forward_busy.discard(fd)


def _forwarded_drain(limit=0.5):
    """Waits, at most limit seconds, until what forked children have
    already written is sent: a child the cell waited for printed before it
    ended, and that belongs to this cell, not the next."""
    deadline = _time_mod.monotonic() + limit
    while _time_mod.monotonic() < deadline:
        fds = list(_forwarding)
        try:
            ready = _select.select(fds, [], [], 0)[0] if fds else []
        except (OSError, ValueError):
            continue  # a thread closed its pipe meanwhile: look again
        if not ready and not _forward_busy:
            return
        _time_mod.sleep(0.002)


def _after_fork_child():
    global _child
    if _child:
        return  # a child's child: it shares its parent's pipe
    mine = _fork_pipes.pop(threading.get_ident(), None)
    for fd in [fd for p in _fork_pipes.values() for fd in p] + list(_forwarding) + [_IN, _OUT]:
        try:
            os.close(fd)
        except OSError:
            pass
    _fork_pipes.clear()
    _forwarding.clear()
    _forward_busy.clear()
    _child = True
    out = 1
    if mine is not None:
        os.close(mine[0])
        out = mine[1]
    sys.stdout = sys.stderr = _PipeStream(out)
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)


def _child_end(error, code=None):
    """A forked child reached the end of the cell: it ends here, its error
    (or sys.exit's message) on its output, never reading the channel."""
    if error:
        sys.stderr.write(error + "\n")
    if code is None:
        code = 1 if error else 0
    elif not isinstance(code, int):
        sys.stderr.write(str(code) + "\n")
        code = 1
    os._exit(code & 0xFF)

# IPython habits, rewritten to plain code before a cell runs. As IPython's
# inputtransformer2 does, the rewriting works on tokens: a magic is a % or
# ! that starts a logical line (or follows "name ="), so text inside a
# string or a comment is never touched; %% works on a cell's first line.
import io as _io, re as _re, shlex as _shlex, subprocess as _subprocess, time as _time, timeit as _timeit, tokenize as _tokenize

_LINE_MAGICS = ("autoreload", "cd", "env", "load_ext", "pip", "time", "timeit", "who", "whos")
_CELL_MAGICS = ("bash", "timeit")
_prev_dir = [None]


class MagicError(Exception):
    """A magic the kernel does not know; line is the cell's line."""

    def __init__(self, msg, line=1):
        super().__init__(msg)
        self.line = line


def _expand(s):
    """$var and {expr} as IPython expands them in shell commands ($$var is
    left for the shell, as IPython leaves it)."""
    s = _re.sub(r"\$\$", "\0", s)
    s = _re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: str(_ns.get(m.group(1), m.group(0))), s)
    s = _re.sub(r"\{([^{}]+)\}", lambda m: str(eval(m.group(1), _ns)), s)
    return s.replace("\0", "$$")


def _magic_sh(cmd, capture=False):
    p = _subprocess.run(["bash", "-c", _expand(cmd)], capture_output=True, text=True)
    if capture:
        return (p.stdout + p.stderr).splitlines()
    if p.stdout:
        sys.stdout.write(p.stdout)
    if p.stderr:
        sys.stderr.write(p.stderr)
    return None


def _magic_bash(body):
    p = _subprocess.run(["bash", "-c", body], capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        raise _subprocess.CalledProcessError(p.returncode, "bash")


def _magic_cd(arg):
    arg = _expand(arg.strip()) or os.path.expanduser("~")
    if arg == "-":
        if _prev_dir[0] is None:
            raise MagicError("%cd -: there is no previous folder")
        arg = _prev_dir[0]
    prev = os.getcwd()
    os.chdir(os.path.expanduser(arg))
    _prev_dir[0] = prev
    print(os.getcwd())


def _magic_env(arg):
    arg = arg.strip()
    if not arg:
        return dict(os.environ)
    if "=" in arg:
        k, v = arg.split("=", 1)
        os.environ[k.strip()] = _expand(v.strip())
        print("env: %s=%s" % (k.strip(), os.environ[k.strip()]))
        return None
    return os.environ.get(arg)


def _magic_time(stmt):
    t0 = _time.perf_counter()
    try:
        tree = ast.parse(stmt, "<%time>", "eval")
        value = eval(compile(tree, "<%time>", "eval"), _ns)
    except SyntaxError:
        exec(compile(stmt, "<%time>", "exec"), _ns)
        value = None
    print("Wall time: %.3g s" % (_time.perf_counter() - t0))
    return value


def _timeit_args(arg):
    words = _shlex.split(arg)
    n, r = None, 7
    while words and words[0] in ("-n", "-r"):
        flag, val = words[0], int(words[1])
        words = words[2:]
        if flag == "-n":
            n = val
        else:
            r = val
    return n, r, " ".join(words)


def _magic_timeit(arg, body=None):
    n, r, rest = _timeit_args(arg)
    setup, stmt = ("pass", rest) if body is None else (rest or "pass", body)
    t = _timeit.Timer(stmt, setup, globals=_ns)
    if n is None:
        n, _ = t.autorange()
    best = min(t.repeat(repeat=r, number=n)) / n
    unit = [(1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1, "s")]
    scale, name = [u for u in unit if best >= u[0]][-1] if best >= 1e-9 else unit[0]
    print("%.3g %s per loop (best of %d runs, %d loops each)" % (best / scale, name, r, n))


def _import_names(dist):
    """The modules a distribution installs (Pillow → PIL), from its metadata."""
    import importlib.metadata as md
    try:
        d = md.distribution(dist)
    except md.PackageNotFoundError:
        return set()
    top = d.read_text("top_level.txt")
    if top:
        return {l.strip() for l in top.splitlines() if l.strip()}
    names = set()
    for f in d.files or []:
        parts = f.parts
        if parts and not parts[0].endswith((".dist-info", ".egg-info")) and parts[0] != "..":
            names.add(parts[0][:-3] if parts[0].endswith(".py") else parts[0])
    return names


def _magic_pip(arg):
    import importlib
    words = _shlex.split(_expand(arg))
    p = _subprocess.run([sys.executable, "-m", "pip"] + words, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        raise MagicError("pip exited with status %d" % p.returncode)
    if not words or words[0] not in ("install", "uninstall"):
        return
    importlib.invalidate_caches()
    # What pip says it installed names the distributions, whatever the
    # arguments were (a folder, a wheel, a requirement with a version).
    dists = []
    for line in p.stdout.splitlines():
        if line.startswith("Successfully installed ") or line.startswith("Successfully uninstalled "):
            dists += [w.rsplit("-", 1)[0] for w in line.split()[2:]]
    if words[0] == "uninstall":
        dists += [w for w in words[1:] if not w.startswith("-")]
    names = set()
    for d in dists:
        names |= _import_names(d) | {d.replace("-", "_").lower()}
    stale = []
    for mod in list(sys.modules):
        top = mod.split(".")[0]
        if top not in names:
            continue
        f = getattr(sys.modules[mod], "__file__", "") or ""
        if f.endswith((".so", ".pyd")):
            stale.append(mod)
        else:
            del sys.modules[mod]
    if stale:
        print("note: %s are compiled extensions already imported; they cannot be reloaded — call eval with `reset: true` to load the new version" % ", ".join(sorted(stale)))


def _rewrite(code):
    lines = code.split("\n")
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name, _, arg = first[2:].partition(" ")
        body = "\n".join(lines[1:])
        if name == "bash":
            return "_magic_bash(%r)" % body
        if name == "timeit":
            return "_magic_timeit(%r, %r)" % (arg, body)
        raise MagicError("unknown cell magic %%%%%s; the supported ones are %s" % (name, ", ".join("%%" + m for m in _CELL_MAGICS)), 1)
    starts = {}  # line number → column where a magic starts, and the target
    try:
        toks = list(_tokenize.generate_tokens(_io.StringIO(code).readline))
    except (_tokenize.TokenError, SyntaxError, IndentationError):
        return code
    line_start = True
    prev = []
    for tok in toks:
        if tok.type in (_tokenize.NEWLINE, _tokenize.NL):
            line_start, prev = True, []
            continue
        if tok.type in (_tokenize.INDENT, _tokenize.DEDENT, _tokenize.COMMENT):
            continue
        if tok.type == _tokenize.ERRORTOKEN and tok.string.isspace():
            continue
        if tok.string in ("%", "!") and (line_start or (len(prev) == 2 and prev[0].type == _tokenize.NAME and prev[1].string == "=")):
            target = prev[0].string if prev else None
            starts[tok.start[0]] = (tok.start[1], tok.string, target)
        line_start = False
        prev.append(tok)
    out = []
    for n, line in enumerate(lines, 1):
        if n not in starts:
            out.append(line)
            continue
        col, kind, target = starts[n]
        indent = line[: len(line) - len(line.lstrip())]
        rest = line[col + 1 :]
        assign = target + " = " if target else ""
        if kind == "!":
            out.append("%s%s_magic_sh(%r%s)" % (indent, assign, rest, ", capture=True" if target else ""))
            continue
        name, _, arg = rest.partition(" ")
        if name not in _LINE_MAGICS:
            raise MagicError("unknown magic %%%s; the supported ones are %s, and the cell magics %s" % (
                name, ", ".join("%" + m for m in _LINE_MAGICS), ", ".join("%%" + m for m in _CELL_MAGICS)), n)
        out.append("%s%s_magic_%s(%r)" % (indent, assign, name, arg))
    return "\n".join(out)


# %who and %whos list the names cells bound, as IPython prints them: not
# those starting with _, nor what the kernel put there (unless rebound).
def _who_names(arg):
    types = set(arg.split())
    names = [n for n in _ns if not n.startswith("_") and not (n in _hidden and _ns[n] is _hidden[n])]
    if types:
        names = [n for n in names if type(_ns[n]).__name__ in types]
    return sorted(names)


def _who_empty(arg):
    print("No variables match your requested type." if arg.strip() else "Interactive namespace is empty.")


def _magic_who(arg):
    names = _who_names(arg)
    if not names:
        return _who_empty(arg)
    for i, n in enumerate(names, 1):
        print(n + "\t", end=" ")
        if i % 9 == 0:
            print()
    print()


def _whos_info(v, tname):
    if tname in ("dict", "list", "tuple"):
        return "n=%d" % len(v)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, getattr(np, "ndarray", ())):
        shape = "x".join(str(d) for d in v.shape)
        nbytes = v.size * v.itemsize
        info = "%s: %s elems, type `%s`, %s bytes" % (shape, v.size, v.dtype, nbytes)
        if nbytes >= 100000:
            info += " (%s kb)" % (nbytes / 1024) if nbytes < 1 << 20 else " (%s Mb)" % (nbytes / (1 << 20))
        return info
    try:
        text = str(v)
    except Exception:
        text = "<object with id %d (str() failed)>" % id(v)
    text = text.replace("\n", "\\n")
    return text if len(text) < 50 else text[:25] + "<...>" + text[-25:]


def _magic_whos(arg):
    names = _who_names(arg)
    if not names:
        return _who_empty(arg)
    types = [type(_ns[n]).__name__ for n in names]
    vw = max(max(map(len, names)), len("Variable")) + 3
    tw = max(max(map(len, types)), len("Type")) + 3
    print("Variable".ljust(vw) + "Type".ljust(tw) + " Data/Info")
    print("-" * (vw + tw + len("Data/Info") + 1))
    for n, t in zip(names, types):
        print(n.ljust(vw) + t.ljust(tw) + " " + _whos_info(_ns[n], t))


# autoreload, as IPython's extension of that name: with %autoreload 2,
# before each cell every module whose source file changed since it was
# loaded is reloaded, and the functions and classes it had are updated in
# place, so names bound with `from m import f` see the new code too.
_extensions = set()
_autoreload = 0
_sources = {}  # module name → (file, mtime_ns, size) when last loaded


def _magic_load_ext(arg):
    name = arg.strip()
    if name != "autoreload":
        raise MagicError("%%load_ext %s: this kernel is not IPython; the one extension it has is autoreload" % name)
    _extensions.add(name)
    _track()


def _magic_autoreload(arg):
    global _autoreload
    if "autoreload" not in _extensions:
        raise MagicError("%autoreload needs `%load_ext autoreload` first")
    mode = arg.strip()
    if mode == "":
        _reload_changed(force=True)
        return
    modes = {"0": 0, "off": 0, "2": 2, "all": 2, "3": 3, "complete": 3}
    if mode not in modes:
        raise MagicError("%%autoreload %s: the modes are 0 (off), 2 (all: every changed module before each cell) and 3 (complete); 1 with %%aimport is not supported" % mode)
    _autoreload = modes[mode]
    _track()


def _stat(f):
    try:
        st = os.stat(f)
    except OSError:
        return None
    return (f, st.st_mtime_ns, st.st_size)


def _source_of(m):
    f = getattr(m, "__file__", None)
    if not isinstance(f, str) or not f.endswith(".py") or f == __file__:
        return None
    return f


def _track():
    """Records the source of each module loaded since the last look."""
    for name, m in list(sys.modules.items()):
        if name not in _sources and name != "__main__":
            f = _source_of(m)
            if f:
                _sources[name] = _stat(f)


def _update(old, new, depth=0):
    """Makes old (a function or class of the module before its reload)
    behave as new; False when part of it could not be swapped (a closure
    whose free variables changed)."""
    import types
    ok = True
    if isinstance(old, types.FunctionType) and isinstance(new, types.FunctionType):
        for attr in ("__code__", "__defaults__", "__kwdefaults__", "__doc__", "__annotations__"):
            try:
                setattr(old, attr, getattr(new, attr))
            except (AttributeError, TypeError, ValueError):
                pass
        old.__dict__.update(new.__dict__)
        ok = old.__code__ is new.__code__
    elif isinstance(old, type) and isinstance(new, type) and depth < 3:
        for key, val in list(new.__dict__.items()):
            if key in ("__dict__", "__weakref__", "__module__", "__qualname__"):
                continue
            prev = old.__dict__.get(key)
            if isinstance(prev, types.FunctionType) and isinstance(val, types.FunctionType):
                ok = _update(prev, val, depth + 1) and ok
            else:
                try:
                    setattr(old, key, val)
                except (AttributeError, TypeError):
                    pass
        for key in [k for k in old.__dict__ if k not in new.__dict__ and isinstance(old.__dict__[k], types.FunctionType)]:
            try:
                delattr(old, key)
            except (AttributeError, TypeError):
                pass
    return ok


# Every version of a module's functions and classes that may still be
# bound somewhere (`from m import f`, an instance's class) is kept, weakly,
# by the name the module defined it under, and each good reload updates
# them all, as IPython's autoreload does: updating only the objects the
# module held at the reload would leave f with the first reloaded version.
# A reload that fails puts the module's namespace back as it was, so the
# next good one starts from the last good version (M-1).
_versions = {}  # (module, name) → weak references to its versions
_stale = {}  # id → (weak reference, module, name, why, cell): versions a reload could not update
_failed = {}  # module → (cell, what happened, its source's stamp then)


def _kind(v):
    import types
    if isinstance(v, type):
        return "a class"
    if isinstance(v, types.FunctionType):
        return "a function"
    return "an object of type " + type(v).__name__


def _own(v, name):
    import types
    return isinstance(v, (type, types.FunctionType)) and getattr(v, "__module__", None) == name


def _remember(name, namespace):
    import weakref
    for key, val in list(namespace.items()):
        if not _own(val, name):
            continue
        refs = _versions.setdefault((name, key), [])
        refs[:] = [r for r in refs if r() is not None]
        if not any(r() is val for r in refs):
            try:
                refs.append(weakref.ref(val))
            except TypeError:
                pass


def _renew(name, m):
    """After a good reload of m: every earlier version behaves as the new
    one, or is noted as stale when it cannot."""
    import types, weakref
    for (mod, key), refs in list(_versions.items()):
        if mod != name:
            continue
        new = m.__dict__.get(key)
        for r in refs:
            old = r()
            if old is None or old is new:
                continue
            why = None
            if key not in m.__dict__:
                why = "%s no longer defines %s" % (name, key)
            elif not _own(new, name) or isinstance(old, type) != isinstance(new, type):
                why = "%s.%s is now %s" % (name, key, _kind(new))
            elif not _update(old, new):
                why = "%s.%s could not be updated in place (its closure changed)" % (name, key)
            if why:
                _stale[id(old)] = (r, name, key, why, _cell)
            else:
                _stale.pop(id(old), None)
    _remember(name, m.__dict__)


def _note_stale():
    """Names of the cell namespace (and instances) still holding a version
    of a module's function or class that its reload could not update."""
    for k in [k for k, v in _stale.items() if v[0]() is None]:
        del _stale[k]
    if not _stale:
        return
    by = {}  # (module, cell) → names, reasons
    for n, v in list(_ns.items()):
        if n.startswith("_") or (n in _hidden and _hidden[n] is v):
            continue
        hit = _stale.get(id(v))
        if hit is None or hit[0]() is not v:
            hit = _stale.get(id(type(v)))
            if hit is None or hit[0]() is not type(v):
                continue
        names, why = by.setdefault((hit[1], hit[4]), ([], []))
        names.append(n)
        if hit[3] not in why:
            why.append(hit[3])
    for (mod, cell), (names, why) in by.items():
        shown = ", ".join(names[:10]) + (" and %d more" % (len(names) - 10) if len(names) > 10 else "")
        sys.stderr.write("[autoreload: %s still %s what %s defined before its reload in cell %s (%s)]\n" % (
            shown, "holds" if len(names) == 1 else "hold", mod, cell, "; ".join(why)))


def _reload_error(e):
    """The exception a reload raised, in one line, with where it was
    raised, root-relative."""
    if isinstance(e, SyntaxError):
        where = " (%s line %s)" % (_shown_path(e.filename), e.lineno) if e.filename and e.lineno else ""
        return "%s: %s%s" % (type(e).__name__, e.msg, where)
    text = "".join(traceback.format_exception_only(type(e), e)).strip().replace("\n", " ")
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename != __file__ and not f.filename.startswith("<frozen")]
    if frames:
        text += " (%s line %d)" % (_shown_path(frames[-1].filename), frames[-1].lineno)
    return text


def _reload_changed(force=False):
    import importlib, importlib.util
    _track()
    for name in list(_sources):
        m = sys.modules.get(name)
        before = _sources[name]
        now = _stat(before[0]) if before else None
        if m is None or now is None or (now == before and not force):
            if m is not None and name in _failed and now == _failed[name][2]:
                cell, what, _ = _failed[name]
                sys.stderr.write("[autoreload: %s keeps its code from before cell %d, where its reload %s; the next cell reloads it once %s is fixed]\n" % (
                    name, cell, what, _shown_path(now[0])))
            continue
        try:
            cached = importlib.util.cache_from_source(now[0])
            # The bytecode cache keys on whole seconds and the size: an edit
            # within the second of the last one would load the old code.
            if os.path.exists(cached):
                os.remove(cached)
        except (OSError, ValueError, NotImplementedError):
            pass
        old = dict(m.__dict__)
        _remember(name, old)
        _sources[name] = now
        try:
            importlib.reload(m)
        except BaseException as e:
            # The module's namespace as it was: none of the half-run new code.
            d = m.__dict__
            for k in [k for k in d if k not in old]:
                del d[k]
            d.update(old)
            sys.modules[name] = m
            interrupted = isinstance(e, KeyboardInterrupt)
            _failed[name] = (_cell, "was interrupted" if interrupted else "failed", now)
            if interrupted:
                raise
            sys.stderr.write("[autoreload of %s failed: %s; it keeps its old code]\n" % (name, _reload_error(e)))
            continue
        _failed.pop(name, None)
        _renew(name, m)


for _name in ("sh", "bash", "cd", "env", "time", "timeit", "pip", "who", "whos", "load_ext", "autoreload"):
    _ns["_magic_" + _name] = globals()["_magic_" + _name]
_hidden = dict(_ns)


def _flush_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for n in plt.get_fignums():
        display(plt.figure(n))
    plt.close("all")


# Cells may await at the top level, as in IPython: such a statement runs to
# its end on one event loop that persists across cells.
_TOP_AWAIT = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
_CO_COROUTINE = 0x80
_future = 0  # the __future__ features cells imported, for later statements
_loop = None
_stop = None  # where the running cell is: what the result says if it stops there


def _await_top(coro):
    global _loop
    import asyncio
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
        asyncio.set_event_loop(_loop)
    task = _loop.create_task(coro)
    try:
        return _loop.run_until_complete(task)
    finally:
        if not task.done():
            task.cancel()  # interrupted: it must not go on in a later cell


def _exec(code):
    if code.co_flags & _CO_COROUTINE:
        return _await_top(eval(code, _ns))
    return eval(code, _ns)


def _multiline(code):
    return len([l for l in code.split("\n") if l.strip()]) > 1


def _run(code, cell):
    """Runs a cell statement by statement (so that _stop knows which one
    runs); every statement compiles before the first runs."""
    global _stop, _future
    name = "<cell %d>" % cell
    source = code
    try:
        code = _rewrite(code)
    except MagicError as e:
        if _multiline(source):
            _stop = {"kind": "unsupported", "line": e.line}
        raise
    try:
        tree = ast.parse(code, name, "exec")
        body = tree.body
        future = _future
        units = []
        for i, node in enumerate(body):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                import __future__
                for alias in node.names:
                    feature = getattr(__future__, alias.name, None)
                    if feature is not None:
                        future |= feature.compiler_flag
            flags = _TOP_AWAIT | future
            if i == len(body) - 1 and isinstance(node, ast.Expr):
                units.append((node, compile(ast.Expression(node.value), name, "eval", flags, dont_inherit=True), True))
            else:
                units.append((node, compile(ast.Module([node], []), name, "exec", flags, dont_inherit=True), False))
    except SyntaxError as e:
        if _multiline(source) and e.lineno:
            _stop = {"kind": "compile", "line": e.lineno}
        raise
    _future = future
    for i, (node, unit, last) in enumerate(units):
        _stop = {"kind": "error", "statement": i + 1, "statements": len(units), "line": node.lineno, "end_line": node.end_lineno or node.lineno}
        if i + 1 < len(units):
            _stop["rest_line"], _stop["rest_end_line"] = units[i + 1][0].lineno, units[-1][0].end_lineno or units[-1][0].lineno
        value = _exec(unit)
        if last and value is not None:
            _stop = None
            _ns["_"] = value
            mod = type(value).__module__ or ""
            if mod.startswith("pandas") and type(value).__name__ == "DataFrame":
                return _frame_markdown(value)
            if mod.startswith("matplotlib"):
                return None  # figures come back as images
            return repr(value)
    _stop = None
    return None


def _shown_path(p):
    """A file under the root as the root-relative path results use."""
    if _ROOT != os.sep and p.startswith(_ROOT + os.sep):
        return p[len(_ROOT) + 1 :]
    return p


def _traceback(e, cell, code):
    name = "<cell %d>" % cell
    if isinstance(e, SyntaxError) and e.filename == name:
        # Where and what, as the cell has it; no frames: nothing ran.
        text = (e.text or "").strip() or (code.split("\n")[e.lineno - 1].strip() if e.lineno and e.lineno <= code.count("\n") + 1 else "")
        return "cell line %d: %s\n%s: %s" % (e.lineno or 0, text, type(e).__name__, e.msg)
    tb = traceback.extract_tb(e.__traceback__)
    # The frames from the cell's own on: not the driver's or asyncio's
    # that ran it.
    first = next((i for i, f in enumerate(tb) if f.filename == name), 0)
    frames = [f for f in tb[first:] if f.filename != __file__]
    out = []
    for f in frames:
        where = "cell line %d" % f.lineno if f.filename == name else "%s:%d" % (_shown_path(f.filename), f.lineno)
        out.append("  %s, in %s" % (where, f.name))
    head = "Traceback (most recent call last):\n" if out else ""
    return head + "\n".join(out) + ("\n" if out else "") + "".join(traceback.format_exception_only(type(e), e)).strip()


_send({"type": "ready", "pid": os.getpid(), "python": sys.version.split()[0]})
while True:
    msg = _await(_next_execute)
    cell = msg.get("cell")
    _shown.clear()
    _patch_pools()
    # A cell may have closed or replaced them; every cell starts with ours.
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    result, error, oom, stop = None, None, False, None
    _cell, _stop = cell, None
    try:
        try:
            if _autoreload:
                _reload_changed()
                _note_stale()
            result = _run(msg["code"], cell)
        except KeyboardInterrupt:
            error = "KeyboardInterrupt: the cell was interrupted"
            stop = _stop and dict(_stop, kind="interrupt" if _stop["kind"] == "error" else _stop["kind"])
        except SystemExit as e:
            if _child:
                _child_end(None, e.code)
            error = "SystemExit(%r): the cell called sys.exit; the kernel keeps running" % (e.code,)
            stop = _stop and dict(_stop, kind="exit" if _stop["kind"] == "error" else _stop["kind"])
        except BaseException as e:
            oom = isinstance(e, MemoryError)
            error = _traceback(e, cell, msg["code"])
            stop = _stop
        if _child:
            _child_end(error)
        try:
            _flush_figures()
        except Exception as e:
            error = (error or "") + "\nfigures could not be drawn: %r" % e
        result = _parts("result", cell, result)
        error = _parts("error", cell, error)
    except KeyboardInterrupt:
        error = (error or "") + "\nKeyboardInterrupt: the cell was interrupted"
    if _forwarding:
        _forwarded_drain()
    _cell, _last = None, cell
    if _autoreload:
        _track()
    done = {"type": "done", "cell": cell}
    if _unread(_FD1):
        try:
            _write_all(_FD1, b"\0" + _MARK + b":%d\0" % cell)
            done["marks"] = [0]
        except OSError:
            pass
    if result is not None:
        done["result"] = result
    if error is not None:
        done["error"] = error
        if stop and (stop["kind"] in ("compile", "unsupported") or stop.get("statements", 0) > 1):
            done["stop"] = stop
    if oom:
        done["oom"] = True
    _send(done)
