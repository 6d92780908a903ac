// The JavaScript kernel's driver (shipped inside builtin-tools): one
// persistent vm context, on a channel of its own. Go passes two pipes on
// fds 3 and 4; they are reopened here through /proc (Node opens files
// close-on-exec) and the inherited ones closed, so no child process can
// use them. Messages are JSON objects, one a line, each written with a
// newline before it (junk on the pipe costs at most itself); every message
// names its cell, and tool calls carry an id. console output reaches Go as
// stream messages, in order, tagged with the cell whose code printed
// (AsyncLocalStorage follows timers and promises a cell left behind).
"use strict";
const fs = require("fs");
const vm = require("vm");
const util = require("util");
const path = require("path");
const { AsyncLocalStorage } = require("async_hooks");
const { createRequire } = require("module");
const { pathToFileURL } = require("url");

const IN = fs.openSync("/proc/self/fd/3", "r");
const OUT = fs.openSync("/proc/self/fd/4", "w");
fs.closeSync(3);
fs.closeSync(4);
// After each cell a mark goes down the real stdout and stderr, where a
// cell's child processes (or process.stdout) write, so Go knows where that
// cell's share ends; only once something can write there.
const MARK = process.argv[2] || "";
let marking = false;
for (const name of ["stdout", "stderr"]) {
  const d = Object.getOwnPropertyDescriptor(process, name);
  if (d && d.get && d.configurable) {
    Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get() { marking = true; return d.get.call(process); } });
  }
}
const canWrite = () => marking || (marking = process.moduleLoadList.includes("NativeModule child_process"));
const CHUNK = 1 << 20; // characters per message: far under Go's line cap

function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}

function send(msg) {
  try {
    writeAll(OUT, Buffer.from("\n" + JSON.stringify(msg) + "\n"));
  } catch (e) {
    process.exit(1); // Go is gone
  }
}

let current = null; // the running cell
let last = 0;
const owner = new AsyncLocalStorage();
const cellOf = () => owner.getStore() || current || last;

function emit(name, text) {
  const cell = cellOf();
  for (let i = 0; i < text.length; i += CHUNK) send({ type: "stream", cell, name, text: text.slice(i, i + CHUNK) });
}

// parts sends a long text ahead of done, as kind messages.
function parts(kind, cell, text) {
  if (text === null || text.length <= CHUNK) return text;
  for (let i = 0; i < text.length; i += CHUNK) send({ type: kind, cell, text: text.slice(i, i + CHUNK) });
  return null;
}

let pending = Buffer.alloc(0);
const readBuf = Buffer.alloc(65536);
const queued = []; // execute requests that came while a tool call waited
function readLine() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl);
      pending = pending.subarray(nl + 1);
      if (line.length) {
        try {
          return JSON.parse(line.toString());
        } catch (e) {}
      }
      continue;
    }
    let got;
    try {
      got = fs.readSync(IN, readBuf, 0, readBuf.length, null);
    } catch (e) {
      if (e.code === "EAGAIN") continue;
      process.exit(0);
    }
    if (got === 0) process.exit(0); // Go closed the channel
    pending = Buffer.concat([pending, readBuf.subarray(0, got)]);
  }
}

// recv returns the next execute request (id 0) or the reply to tool call id.
function recv(id) {
  if (!id && queued.length) return queued.shift();
  for (;;) {
    const m = readLine();
    if (m.type === "execute") {
      if (!id) return m;
      queued.push(m);
    } else if (m.type === "tool_result" && id && m.id === id) return m;
  }
}

const root = process.cwd();
const req = createRequire(path.join(root, "index.js"));
const show = (v) => (typeof v === "string" ? v : util.inspect(v, { depth: 4, breakLength: 100 }));
const stream = (name) => (...args) => emit(name, args.map(show).join(" ") + "\n");
let ids = 0;
const sandbox = {
  console: { log: stream("stdout"), info: stream("stdout"), debug: stream("stdout"), warn: stream("stderr"), error: stream("stderr") },
  display: (...objs) => objs.forEach((o) => emit("stdout", show(o) + "\n")),
  // Calls are answered in order; Promise.all over many works, one at a time.
  tool: async (name, args) => {
    const id = ++ids;
    send({ type: "tool_call", cell: cellOf(), id, name, args: args || {} });
    const r = recv(id);
    if (r.error) throw new Error(r.error);
    return r.result;
  },
  require: req,
  __import: (m) => import(m.startsWith(".") || m.startsWith("/") ? pathToFileURL(path.resolve(root, m)).href : req.resolve(m) && pathToFileURL(req.resolve(m)).href),
  process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, URL, TextEncoder, TextDecoder, fetch: globalThis.fetch,
};
const context = vm.createContext(sandbox);

// A small tokenizer: enough to find a cell's top-level statements and
// declarations without touching strings, templates, comments or regexes.
function tokens(src) {
  const out = [];
  let i = 0, prev = null;
  const regexOK = () => !prev || /^(?:[(,=:[!&|?{};+\-*%<>~^]|return|typeof|case|do|else|in|of|new|delete|void|throw|await|yield)$/.test(prev.v);
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { if (c === "\n") out.push({ t: "nl", v: "\n", s: i }); i++; continue; }
    if (src.startsWith("//", i)) { const e = src.indexOf("\n", i); i = e < 0 ? src.length : e; continue; }
    if (src.startsWith("/*", i)) { const e = src.indexOf("*/", i + 2); i = e < 0 ? src.length : e + 2; continue; }
    const s = i;
    if (c === '"' || c === "'") { i++; while (i < src.length && src[i] !== c) { if (src[i] === "\\") i++; i++; } i++; prev = { t: "str", v: "s", s }; out.push(prev); continue; }
    if (c === "`") { let depth = 0; i++; while (i < src.length) { if (src[i] === "\\") { i += 2; continue; } if (depth === 0 && src[i] === "`") break; if (src.startsWith("${", i)) { depth++; i += 2; continue; } if (depth > 0 && src[i] === "}") depth--; i++; } i++; prev = { t: "str", v: "t", s }; out.push(prev); continue; }
    if (c === "/" && regexOK()) { i++; let cls = false; while (i < src.length && (src[i] !== "/" || cls)) { if (src[i] === "\\") i++; else if (src[i] === "[") cls = true; else if (src[i] === "]") cls = false; i++; } i++; while (/[a-z]/i.test(src[i] || "")) i++; prev = { t: "re", v: "r", s }; out.push(prev); continue; }
    if (/[A-Za-z_$]/.test(c)) { while (i < src.length && /[\w$]/.test(src[i])) i++; prev = { t: "id", v: src.slice(s, i), s }; out.push(prev); continue; }
    if (/[0-9]/.test(c)) { while (i < src.length && /[\w.]/.test(src[i])) i++; prev = { t: "num", v: "n", s }; out.push(prev); continue; }
    i++; prev = { t: "p", v: c, s }; out.push(prev);
  }
  return out;
}

// statements splits a cell into its top-level statements: [start, end,
// first token index, last token index].
function statements(src, toks) {
  const out = [];
  let depth = 0, start = null;
  const close = (end, last) => { if (start !== null) out.push([toks[start].s, end, start, last]); start = null; };
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (t.t === "nl") {
      if (depth === 0 && start !== null) {
        const p = toks[k - 1], n = toks.slice(k + 1).find((x) => x.t !== "nl");
        const cont = (p && p.t === "p" && /[,=+\-*\/&|?:.(\[{<>!]/.test(p.v)) || (n && n.t === "p" && /^[.,?:)\]}+\-*\/&|=<>]$/.test(n.v)) ||
          (n && n.t === "id" && /^(else|catch|finally)$/.test(n.v)) || (p && p.t === "p" && p.v === "}" && n && n.t === "id" && n.v === "while");
        if (!cont) close(src.length > t.s ? t.s : src.length, k - 1);
      }
      continue;
    }
    if (start === null) start = k;
    if (t.t === "p" && "({[".includes(t.v)) depth++;
    if (t.t === "p" && ")}]".includes(t.v)) depth--;
    if (depth === 0 && t.t === "p" && t.v === ";") close(t.s + 1, k);
  }
  close(src.length, toks.length - 1);
  return out;
}

const KEYWORD = /^(let|const|var|class|function|async|if|for|while|do|return|throw|try|switch|import|export|break|continue)$/;

// transform turns a cell into code whose top-level declarations land on the
// context's global object (so they persist and may be declared again) and
// whose value is the last expression's. Without top-level await the cell
// runs as a script (its completion value is the echo); with it, as the body
// of an async function that returns the last expression.
function transform(src) {
  const toks = tokens(src);
  const stmts = statements(src, toks);
  const isAsync = toks.some((t) => t.t === "id" && t.v === "await") || stmts.some(([, , f]) => toks[f].v === "import" && !(toks[f + 1] && toks[f + 1].v === "("));
  const parts = [];
  let prevEnd = 0, funcs = [];
  stmts.forEach(([s, e, f, l], idx) => {
    parts.push(src.slice(prevEnd, s));
    prevEnd = e;
    let text = src.slice(s, e);
    const t = toks[f], n = toks[f + 1];
    const last = idx === stmts.length - 1;
    if (t.t === "id" && (t.v === "let" || t.v === "const" || t.v === "var")) {
      const rest = text.slice(t.v.length).replace(/;\s*$/, "");
      text = isAsync ? (n && (n.v === "{" || n.v === "[") ? "(" + rest.trim() + ");" : rest.trim() + ";") : "var" + rest + ";";
    } else if (t.t === "id" && t.v === "class" && n && n.t === "id") {
      text = (isAsync ? "globalThis." + n.v + " = " : "var " + n.v + " = ") + text.replace(/;\s*$/, "") + ";";
    } else if (t.t === "id" && (t.v === "function" || (t.v === "async" && n && n.v === "function"))) {
      const ni = toks.slice(f, l + 1).findIndex((x, i) => i > 0 && x.t === "id" && x.v !== "function");
      if (isAsync && ni > 0) funcs.push(toks[f + ni].v);
    } else if (t.t === "id" && t.v === "import" && !(n && n.v === "(")) {
      const m = /^import\s+([\s\S]*?)\s+from\s+(["'][^"']+["'])\s*;?$/.exec(text.trim());
      if (!m) throw new SyntaxError("cell: an import this kernel cannot rewrite: " + text.trim());
      // import d, {a as b} from "m" and the other forms, as assignments
      // from one dynamic import.
      let spec = m[1].trim(), def = null;
      const dm = /^([\w$]+)\s*(?:,\s*([\s\S]*))?$/.exec(spec);
      if (dm) { def = dm[1]; spec = (dm[2] || "").trim(); }
      const tmp = "__module" + idx;
      text = tmp + " = await __import(" + m[2] + ");";
      if (def) text += " " + def + " = " + tmp + ".default;";
      if (spec.startsWith("*")) text += " " + spec.split(/\s+as\s+/)[1] + " = " + tmp + ";";
      else if (spec.startsWith("{")) text += " ({" + spec.slice(1, -1).replace(/([\w$]+)\s+as\s+([\w$]+)/g, "$1: $2") + "} = " + tmp + ");";
    } else if (last && isAsync && !(t.t === "id" && KEYWORD.test(t.v)) && !(t.t === "p" && t.v === "{")) {
      text = "return (" + text.replace(/;\s*$/, "") + ");";
    }
    parts.push(text);
  });
  parts.push(src.slice(prevEnd));
  let body = parts.join("");
  if (!isAsync) return { code: body, isAsync };
  const keep = funcs.map((f) => "globalThis." + f + " = " + f + ";").join("");
  return { code: "(async () => {" + keep + body + "\n})()", isAsync };
}

// SIGINT outside a running script (it breaks one by itself) ends the cell's
// wait for its promise; the context stays.
let interruptCell = null;
process.on("SIGINT", () => {
  if (current === null) return;
  send({ type: "interrupted", cell: current });
  if (interruptCell) interruptCell();
});
send({ type: "ready", pid: process.pid, node: process.version });
(async () => {
  for (;;) {
    const msg = recv(0);
    const cell = msg.cell;
    let result = null, error = null, oom = false;
    current = cell;
    try {
      const { code, isAsync } = transform(msg.code);
      // The async form opens on the cell's first line, so lines match.
      const script = new vm.Script(code, { filename: "cell " + cell });
      // SIGINT (a clock ran out) breaks a running script and keeps the
      // context.
      let value = owner.run(cell, () => script.runInContext(context, { breakOnSigint: true }));
      if (isAsync) {
        const stop = new Promise((_, reject) => { interruptCell = () => reject(new Error("Interrupted: the cell was interrupted while it waited")); });
        // A promise that never settles must not let Node exit for want
        // of work: the interrupt has to find the kernel alive.
        const alive = setInterval(() => {}, 1 << 30);
        try {
          value = await Promise.race([value, stop]);
        } finally {
          clearInterval(alive);
        }
      }
      if (value !== undefined) result = util.inspect(value, { depth: 4, breakLength: 100 });
    } catch (e) {
      oom = e instanceof RangeError && /allocation failed|Invalid string length|Invalid array length/.test(String(e.message));
      const stack = String((e && e.stack) || e).split("\n").filter((l) => !l.includes("kernel.js") && !l.includes("node:"));
      error = stack.join("\n").replace(/cell (\d+):(\d+)/g, (m, c, l) => "cell line " + l);
    }
    interruptCell = null;
    result = parts("result", cell, result);
    error = parts("error", cell, error);
    current = null;
    last = cell;
    const done = { type: "done", cell };
    if (canWrite()) {
      const mark = Buffer.from("\0" + MARK + ":" + cell + "\0");
      for (const fd of [1, 2]) {
        try {
          writeAll(fd, mark);
        } catch (e) {}
      }
      done.marks = [0, 1];
    }
    if (result !== null) done.result = result;
    if (error !== null) done.error = error;
    if (oom) done.oom = true;
    send(done);
  }
})();
