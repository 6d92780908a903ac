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


def _flush_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for n in plt.get_fignums():
        display(plt.figure(n))
    plt.close("all")


def _run(code, cell):
    name = "<cell %d>" % cell
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
