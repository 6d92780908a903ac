# The Python kernel's driver (shipped inside builtin-tools). It talks to Go
# over two pipes of its own, fds 3 (in) and 4 (out), in Content-Length
# frames; both are made close-on-exec at once, so a subprocess or a !cmd
# child can neither read nor write them. The cell's prints reach Go as
# stream messages on the same channel, in order.
import ast, base64, hashlib, io, json, os, sys, traceback

PROTO_IN, PROTO_OUT = 3, 4
os.set_inheritable(PROTO_IN, False)
os.set_inheritable(PROTO_OUT, False)
_in = os.fdopen(PROTO_IN, "rb", buffering=0)
_out = os.fdopen(PROTO_OUT, "wb", buffering=0)


def _send(msg):
    body = json.dumps(msg, default=repr).encode()
    _out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _recv():
    length = None
    while True:
        line = b""
        while not line.endswith(b"\n"):
            ch = _in.read(1)
            if not ch:
                sys.exit(0)
            line += ch
        line = line.strip()
        if not line:
            if length is not None:
                break
            continue
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    data = b""
    while len(data) < length:
        chunk = _in.read(length - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return json.loads(data)


class _Stream(io.TextIOBase):
    def __init__(self, name):
        self.name = name

    def writable(self):
        return True

    def write(self, s):
        if s:
            _send({"type": "stream", "name": self.name, "text": s})
        return len(s)

    def flush(self):
        pass


sys.stdout = _Stream("stdout")
sys.stderr = _Stream("stderr")
os.environ.setdefault("MPLBACKEND", "Agg")

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
                _send({"type": "image", "mime": "image/png", "data": base64.b64encode(png).decode()})
        elif mod.startswith("pandas") and type(obj).__name__ == "DataFrame":
            _send({"type": "display", "text": _frame_markdown(obj)})
        else:
            _send({"type": "display", "text": repr(obj)})


class ToolError(Exception):
    """A tool called from a cell failed; the message is the tool's."""


def tool(name, args=None):
    _send({"type": "tool_call", "name": name, "args": args or {}})
    msg = _recv()
    if msg.get("error"):
        raise ToolError(msg["error"])
    return msg.get("result")


_ns = {"__name__": "__main__", "display": display, "tool": tool, "ToolError": ToolError}

# IPython habits, rewritten to plain code before a cell runs. As IPython's
# inputtransformer2 does, the rewriting works on tokens: a magic is a % or
# ! that starts a logical line (or follows "name ="), so text inside a
# string or a comment is never touched; %% works on a cell's first line.
import io as _io, re as _re, shlex as _shlex, subprocess as _subprocess, time as _time, timeit as _timeit, tokenize as _tokenize

_LINE_MAGICS = ("cd", "env", "pip", "time", "timeit")
_CELL_MAGICS = ("bash", "timeit")
_prev_dir = [None]


class MagicError(Exception):
    pass


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
        print("note: %s are compiled extensions already imported; they cannot be reloaded — use reset to load the new version" % ", ".join(sorted(stale)))


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
        raise MagicError("unknown cell magic %%%%%s; the supported ones are %s" % (name, ", ".join("%%" + m for m in _CELL_MAGICS)))
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
                name, ", ".join("%" + m for m in _LINE_MAGICS), ", ".join("%%" + m for m in _CELL_MAGICS)))
        out.append("%s%s_magic_%s(%r)" % (indent, assign, name, arg))
    return "\n".join(out)


for _name in ("sh", "bash", "cd", "env", "time", "timeit", "pip"):
    _ns["_magic_" + _name] = globals()["_magic_" + _name]


def _flush_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for n in plt.get_fignums():
        display(plt.figure(n))
    plt.close("all")


def _run(code, cell):
    name = "<cell %d>" % cell
    code = _rewrite(code)
    tree = ast.parse(code, name, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), _ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), _ns)
        if value is not None:
            _ns["_"] = value
            mod = type(value).__module__ or ""
            if mod.startswith("pandas") and type(value).__name__ == "DataFrame":
                return _frame_markdown(value)
            if mod.startswith("matplotlib"):
                return None  # figures come back as images
            return repr(value)
    return None


def _traceback(e, cell):
    name = "<cell %d>" % cell
    tb = traceback.extract_tb(e.__traceback__)
    frames = [f for f in tb if f.filename != __file__]
    out = []
    for f in frames:
        where = "cell line %d" % f.lineno if f.filename == name else "%s:%d" % (f.filename, f.lineno)
        out.append("  %s, in %s" % (where, f.name))
    if isinstance(e, SyntaxError) and e.filename == name:
        out.append("  cell line %d: %s" % (e.lineno or 0, (e.text or "").rstrip()))
    head = "Traceback (most recent call last):\n" if out else ""
    return head + "\n".join(out) + ("\n" if out else "") + "".join(traceback.format_exception_only(type(e), e)).strip()


_send({"type": "ready", "pid": os.getpid(), "python": sys.version.split()[0]})
while True:
    msg = _recv()
    if msg.get("type") != "execute":
        continue
    _shown.clear()
    # A cell may have closed or replaced them; every cell starts with ours.
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    result, error = None, None
    try:
        result = _run(msg["code"], msg["cell"])
    except KeyboardInterrupt:
        error = "KeyboardInterrupt: the cell was interrupted"
    except SystemExit as e:
        error = "SystemExit(%r): the cell called sys.exit; the kernel keeps running" % (e.code,)
    except BaseException as e:
        error = _traceback(e, msg["cell"])
    try:
        _flush_figures()
    except Exception as e:
        error = (error or "") + "\nfigures could not be drawn: %r" % e
    _send({"type": "done", "result": result, "error": error})
