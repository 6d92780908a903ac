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
const { createRequire, isBuiltin } = require("module");
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
  process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, URL, TextEncoder, TextDecoder, fetch: globalThis.fetch,
};
// The statement a cell has reached, [cell, statement], set by the code
// transform() adds between top-level statements.
const AT = "__cellStatement";
Object.defineProperty(sandbox, AT, { value: null, writable: true, enumerable: false, configurable: false });
const context = vm.createContext(sandbox);

// Modules load as an ES module in the root would load them: relative
// specifiers from the root, bare ones from its node_modules with the
// import condition (so ESM-only packages load), builtins as themselves.
// Node 20.12 and later do that themselves for a script whose file name is
// in the root. Older ones need --experimental-vm-modules for a callback,
// so there a cell's import() calls become calls of IMPORT, which resolves
// as below and imports from here.
const mainLoader = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
const IMPORT = mainLoader ? "import" : "__import";
if (!mainLoader) {
  Object.defineProperty(sandbox, IMPORT, {
    value: (spec, options) => import(resolveFromRoot(String(spec)), options),
    writable: false, enumerable: false, configurable: false,
  });
}
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  // The loader is experimental in Node 20; saying so in every cell's
  // output would be noise the cell did not make.
  if (/USE_MAIN_CONTEXT_DEFAULT_LOADER|importModuleDynamically/.test(String(warning && warning.message ? warning.message : warning))) return;
  return emitWarning.call(process, warning, ...rest);
};

function resolveFromRoot(spec) {
  if (spec.startsWith("node:") || isBuiltin(spec) || /^[a-z][a-z0-9+.-]+:/i.test(spec)) return spec;
  if (/^\.\.?(\/|$)/.test(spec) || spec.startsWith("/")) return pathToFileURL(path.resolve(root, spec)).href;
  const file = esmEntry(spec);
  return pathToFileURL(file || req.resolve(spec)).href;
}

// esmEntry is the file a bare specifier names under the import condition,
// from the exports map of the package it names; null when the package has
// none (then require's resolution is the same).
function esmEntry(spec) {
  const m = /^((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(spec);
  if (!m) return null;
  const sub = "." + (m[2] || "");
  for (const dir of req.resolve.paths(spec) || []) {
    const pkgDir = path.join(dir, m[1]);
    let pkg;
    try {
      pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    } catch (e) {
      continue;
    }
    const target = pkg.exports === undefined ? null : exportTarget(pkg.exports, sub);
    return target === null ? null : path.join(pkgDir, target);
  }
  return null;
}

const CONDITIONS = ["node", "import", "default"];

function exportTarget(exp, sub) {
  const isMap = exp && typeof exp === "object" && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith("."));
  if (!isMap) return sub === "." ? conditional(exp, null) : null;
  if (Object.prototype.hasOwnProperty.call(exp, sub)) return conditional(exp[sub], null);
  // Subpath patterns, the longest prefix first, as Node picks them.
  const keys = Object.keys(exp).filter((k) => k.includes("*")).sort((a, b) => b.indexOf("*") - a.indexOf("*"));
  for (const key of keys) {
    const [pre, post] = [key.slice(0, key.indexOf("*")), key.slice(key.indexOf("*") + 1)];
    if (sub.startsWith(pre) && sub.endsWith(post) && sub.length >= pre.length + post.length) {
      return conditional(exp[key], sub.slice(pre.length, sub.length - post.length));
    }
  }
  return null;
}

function conditional(t, hit) {
  if (typeof t === "string") return hit === null ? t : t.split("*").join(hit);
  if (Array.isArray(t)) {
    for (const x of t) {
      const r = conditional(x, hit);
      if (r !== null) return r;
    }
    return null;
  }
  if (t && typeof t === "object") {
    for (const k of Object.keys(t)) {
      if (CONDITIONS.includes(k)) {
        const r = conditional(t[k], hit);
        if (r !== null) return r;
      }
    }
  }
  return null;
}

// A small tokenizer: enough to find a cell's top-level statements and
// declarations without touching strings, templates, comments or regexes.
// Each token has its kind, its text (or a stand-in), and where it starts
// and ends.
function tokens(src) {
  const out = [];
  let i = 0, prev = null;
  const regexOK = () => !prev || /^(?:[(,=:[!&|?{};+\-*%<>~^]|return|typeof|case|do|else|in|of|new|delete|void|throw|await|yield)$/.test(prev.v);
  const push = (t, v, s) => { prev = { t, v, s, e: i }; out.push(prev); };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { if (c === "\n") out.push({ t: "nl", v: "\n", s: i, e: i + 1 }); i++; continue; }
    if (src.startsWith("//", i)) { const e = src.indexOf("\n", i); i = e < 0 ? src.length : e; continue; }
    if (src.startsWith("/*", i)) { const e = src.indexOf("*/", i + 2); i = e < 0 ? src.length : e + 2; continue; }
    const s = i;
    if (c === '"' || c === "'") { i++; while (i < src.length && src[i] !== c) { if (src[i] === "\\") i++; i++; } i = Math.min(i + 1, src.length); push("str", "s", s); continue; }
    if (c === "`") { let depth = 0; i++; while (i < src.length) { if (src[i] === "\\") { i += 2; continue; } if (depth === 0 && src[i] === "`") break; if (src.startsWith("${", i)) { depth++; i += 2; continue; } if (depth > 0 && src[i] === "}") depth--; i++; } i = Math.min(i + 1, src.length); push("str", "t", s); continue; }
    if (c === "/" && regexOK()) { i++; let cls = false; while (i < src.length && (src[i] !== "/" || cls)) { if (src[i] === "\\") i++; else if (src[i] === "[") cls = true; else if (src[i] === "]") cls = false; i++; } i = Math.min(i + 1, src.length); while (/[a-z]/i.test(src[i] || "")) i++; push("re", "r", s); continue; }
    if (/[A-Za-z_$]/.test(c)) { while (i < src.length && /[\w$]/.test(src[i])) i++; push("id", src.slice(s, i), s); continue; }
    if (/[0-9]/.test(c)) { while (i < src.length && /[\w.]/.test(src[i])) i++; push("num", "n", s); continue; }
    i++; push("p", c, s);
  }
  return out;
}

// statements splits a cell into its top-level statements: {s, e} their
// source range (the last token's end: a trailing comment is not part of
// it), {f, l} their first and last token.
function statements(toks) {
  const out = [];
  let depth = 0, start = null;
  const close = (last) => {
    if (start === null) return;
    while (last > start && toks[last].t === "nl") last--;
    out.push({ s: toks[start].s, e: toks[last].e, f: start, l: last });
    start = null;
  };
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (t.t === "nl") {
      if (depth === 0 && start !== null) {
        const p = toks[k - 1], n = toks.slice(k + 1).find((x) => x.t !== "nl");
        const cont = (p && p.t === "p" && /[,=+\-*\/&|?:.(\[{<>!]/.test(p.v)) || (n && n.t === "p" && /^[.,?:)\]}+\-*\/&|=<>]$/.test(n.v)) ||
          (n && n.t === "id" && /^(else|catch|finally)$/.test(n.v)) || (p && p.t === "p" && p.v === "}" && n && n.t === "id" && n.v === "while");
        if (!cont) close(k - 1);
      }
      continue;
    }
    if (start === null) start = k;
    if (t.t === "p" && "({[".includes(t.v)) depth++;
    if (t.t === "p" && ")}]".includes(t.v)) depth--;
    if (depth === 0 && t.t === "p" && t.v === ";") close(k);
  }
  if (start !== null) close(toks.length - 1);
  return out;
}

const KEYWORD = /^(let|const|var|class|function|async|if|for|while|do|return|throw|try|switch|import|export|break|continue)$/;

// Unsupported is a statement transform() cannot turn into code that runs
// in the persistent context; nothing of the cell runs.
class Unsupported extends Error {
  constructor(statement, statements, line, message) {
    super(message);
    this.name = "SyntaxError";
    this.statement = statement;
    this.statements = statements;
    this.line = line;
  }
}

const isImport = (toks, f) => toks[f].t === "id" && toks[f].v === "import" && toks[f + 1] && !(toks[f + 1].t === "p" && (toks[f + 1].v === "(" || toks[f + 1].v === "."));

// transform turns a cell into code whose top-level declarations land on the
// context's global object (so they persist and may be declared again) and
// whose value is the last expression's. Without top-level await the cell
// runs as a script (its completion value is the echo); with it, as the body
// of an async function that returns the last expression. Static imports
// become import() calls whose names are assigned as globals. Between
// statements it notes which one the cell has reached, on the line where
// the previous one ends, so line numbers stay the cell's; every rewritten
// statement keeps its number of lines.
function transform(src, cell) {
  const toks = tokens(src);
  const stmts = statements(toks);
  const lineStarts = [0];
  for (let i = 0; i < src.length; i++) if (src[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (off) => { let n = 0; while (n + 1 < lineStarts.length && lineStarts[n + 1] <= off) n++; return n + 1; };
  const info = stmts.map((st) => ({ line: lineOf(st.s), end: lineOf(Math.max(st.s, st.e - 1)) }));
  const isAsync = toks.some((t) => t.t === "id" && t.v === "await") || stmts.some((st) => isImport(toks, st.f));
  const skip = (k) => { while (k < toks.length && toks[k].t === "nl") k++; return k; };
  const parts = [];
  let prevEnd = 0;
  const funcs = [];
  // Without the main loader, import(…) anywhere in the cell is IMPORT(…).
  const dynamic = mainLoader ? [] : toks.filter((t, k) => t.t === "id" && t.v === "import" && toks[skip(k + 1)] && toks[skip(k + 1)].v === "(" &&
    !(k > 0 && toks[k - 1].t === "p" && toks[k - 1].v === "."));
  const slice = (a, b) => {
    let out = "", at = a;
    for (const t of dynamic) {
      if (t.s >= a && t.e <= b) {
        out += src.slice(at, t.s) + IMPORT;
        at = t.e;
      }
    }
    return out + src.slice(at, b);
  };
  stmts.forEach((st, idx) => {
    if (idx > 0) {
      const note = (isAsync ? "" : "var ") + AT + " = [" + cell + ", " + (idx + 1) + "];";
      parts.push(/[;]$/.test(parts[parts.length - 1]) ? " " + note : "; " + note);
    }
    parts.push(src.slice(prevEnd, st.s));
    prevEnd = st.e;
    const orig = src.slice(st.s, st.e);
    let text = slice(st.s, st.e);
    let f = skip(st.f);
    const l = st.l;
    const fail = (what) => { throw new Unsupported(idx + 1, stmts.length, info[idx].line, what); };
    if (toks[f].t === "id" && toks[f].v === "export") {
      const n = toks[skip(f + 1)];
      if (!(n && n.t === "id" && /^(let|const|var|function|async|class)$/.test(n.v))) {
        fail("a cell is a script, not a module: `" + firstLine(orig) + "` has nothing to export to; write the declaration without export");
      }
      f = skip(f + 1);
      text = slice(toks[f].s, st.e);
    }
    const t = toks[f], n = toks[skip(f + 1)];
    const last = idx === stmts.length - 1;
    if (t.t === "id" && (t.v === "let" || t.v === "const" || t.v === "var") && n && (n.t === "id" || n.v === "{" || n.v === "[")) {
      text = declaration(slice, toks, t.v, skip(f + 1), l, isAsync);
    } else if (t.t === "id" && t.v === "class" && n && n.t === "id") {
      text = (isAsync ? "globalThis." + n.v + " = " : "var " + n.v + " = ") + text.replace(/;\s*$/, "") + ";";
    } else if (t.t === "id" && (t.v === "function" || (t.v === "async" && n && n.v === "function"))) {
      const name = toks.slice(f, l + 1).find((x, i) => i > 0 && x.t === "id" && x.v !== "function");
      if (isAsync && name) funcs.push(name.v);
    } else if (isImport(toks, f)) {
      text = importCode(src, toks, skip(f + 1), l, idx, fail);
    } else if (last && isAsync && !(t.t === "id" && KEYWORD.test(t.v)) && !(t.t === "p" && t.v === "{")) {
      text = "return (" + text.replace(/;\s*$/, "") + ");";
    }
    // Keep the statement's line count, so later lines stay where they were.
    const lost = lines(orig) - lines(text);
    if (lost > 0) text += "\n".repeat(lost);
    parts.push(text);
  });
  parts.push(src.slice(prevEnd));
  const body = parts.join("");
  if (!isAsync) return { code: body, isAsync, info };
  const keep = funcs.map((f) => "globalThis." + f + " = " + f + ";").join("");
  return { code: "(async () => {" + keep + body + "\n})()", isAsync, info };
}

const lines = (s) => s.split("\n").length - 1;
const firstLine = (s) => { const l = s.split("\n")[0]; return l.length > 80 ? l.slice(0, 80) + "…" : l; };

// declaration rewrites let, const or var declarators (toks a..l) as
// assignments to globals: `var` ones in a script, plain assignments in the
// async form, where a var would be the function's. A declarator without
// a value is undefined for let and const and keeps a var's value.
function declaration(slice, toks, kind, a, l, isAsync) {
  let end = l;
  if (toks[end].t === "p" && toks[end].v === ";") end--;
  const decls = [];
  let depth = 0, start = a;
  for (let k = a; k <= end + 1; k++) {
    const t = toks[k];
    if (k === end + 1 || (depth === 0 && t.t === "p" && t.v === ",")) {
      let e = k - 1;
      while (e > start && toks[e].t === "nl") e--;
      if (e >= start) decls.push([start, e]);
      start = k + 1;
      continue;
    }
    if (t.t === "p" && "({[".includes(t.v)) depth++;
    if (t.t === "p" && ")}]".includes(t.v)) depth--;
  }
  const out = decls.map(([s, e]) => {
    let d = 0, init = false;
    for (let k = s; k <= e; k++) {
      const t = toks[k];
      if (t.t === "p" && "({[".includes(t.v)) d++;
      if (t.t === "p" && ")}]".includes(t.v)) d--;
      if (d === 0 && t.t === "p" && t.v === "=") { init = true; break; }
    }
    const text = slice(toks[s].s, toks[e].e);
    const name = toks[s].t === "id" ? toks[s].v : null;
    if (!isAsync) return init || kind === "var" || !name ? text : text + " = undefined";
    if (init) return /^[{[]/.test(text) ? "(" + text + ")" : text;
    if (!name) return text; // a pattern without a value: the syntax error it is
    return kind === "var" ? "globalThis." + name + " = globalThis." + name : name + " = undefined";
  });
  return isAsync ? out.join("; ") + ";" : "var " + out.join(", ") + ";";
}

// importCode rewrites `import ... from "m"` (tokens a..l after the
// keyword) as an import() whose names are then assigned as globals.
function importCode(src, toks, a, l, idx, fail) {
  let k = a;
  const tok = () => (k <= l ? toks[k] : null);
  const next = () => { k++; while (k <= l && toks[k].t === "nl") k++; return toks[k]; };
  const is = (v) => k <= l && toks[k].v === v && toks[k].t !== "str";
  const text = src.slice(toks[a].s, toks[l].e);
  const bad = () => fail("an import this kernel cannot rewrite: `import " + firstLine(text) + "`; write it as `const m = await import(\"…\")`");
  let def = null, ns = null, named = null, spec = null;
  if (tok() && tok().t === "str") {
    spec = src.slice(tok().s, tok().e);
    next();
  } else {
    const t0 = tok();
    if (t0 && t0.t === "id" && (t0.v !== "from" || (toks[k + 1] && toks[k + 1].v === "from"))) {
      def = tok().v;
      next();
      if (is(",")) next();
    }
    if (is("*")) {
      next();
      if (!is("as")) bad();
      next();
      if (!tok() || tok().t !== "id") bad();
      ns = tok().v;
      next();
    } else if (is("{")) {
      const entries = [];
      next();
      while (k <= l && !is("}")) {
        const t = tok();
        if (!t || (t.t !== "id" && t.t !== "str")) bad();
        let key = src.slice(t.s, t.e), local = t.t === "id" ? t.v : null;
        next();
        if (is("as")) {
          next();
          if (!tok() || tok().t !== "id") bad();
          local = tok().v;
          next();
        }
        if (!local) bad();
        entries.push(key === local ? key : key + ": " + local);
        if (is(",")) next();
      }
      if (!is("}")) bad();
      next();
      named = entries;
    }
    if (!is("from")) bad();
    next();
    if (!tok() || tok().t !== "str") bad();
    spec = src.slice(tok().s, tok().e);
    next();
  }
  let options = "";
  if (is("with") || is("assert")) {
    next();
    if (!is("{")) bad();
    const open = k;
    let depth = 0;
    for (; k <= l; k++) {
      if (toks[k].v === "{" && toks[k].t === "p") depth++;
      if (toks[k].v === "}" && toks[k].t === "p" && --depth === 0) break;
    }
    if (k > l) bad();
    options = ", { with: " + src.slice(toks[open].s, toks[k].e) + " }";
    next();
  }
  if (is(";")) next();
  if (k <= l) bad();
  const m = "__import" + (idx + 1);
  let out = (def || ns || named ? "const " + m + " = " : "") + "await " + IMPORT + "(" + spec + options + ");";
  if (def) out += " " + def + " = " + m + ".default;";
  if (ns) out += " " + ns + " = " + m + ";";
  if (named) out += " ({" + named.join(", ") + "} = " + m + ");";
  return out;
}

// A rejection no one handles, or an exception thrown by a callback, would
// end the kernel; it is reported to the cell it belongs to instead.
process.on("unhandledRejection", (e) => emit("stderr", "Uncaught (in promise) " + errorText(e) + "\n"));
process.on("uncaughtException", (e) => emit("stderr", "Uncaught " + errorText(e) + "\n"));

const rootPrefix = root.endsWith("/") ? root : root + "/";
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const cellFrame = new RegExp("(?:" + escapeRe(rootPrefix) + ")?cell (\\d+):(\\d+)(?::\\d+)?", "g");
const cellName = new RegExp(escapeRe(rootPrefix) + "cell (\\d+)", "g");
// Files under the root are named as results name them, from the root.
const underRoot = root === "/" ? null : new RegExp("(?:file://)?" + escapeRe(rootPrefix), "g");

// How many lines each recent cell has: a frame past them is the async
// form's call of its own function, not the cell's code.
const cellLines = new Map();

// errorText is an exception as the cell's: its message whole, the stack
// without the driver's and Node's own frames, lines named the cell's. No
// columns: on a line transform() changed they would not be the cell's.
function errorText(e) {
  if (!(e instanceof Error) && !(e && typeof e.stack === "string")) return "Thrown: " + util.inspect(e) + " (not an Error, so no stack)";
  let text;
  try {
    text = String(e.stack || e);
  } catch (err) {
    text = "an exception whose stack cannot be read";
  }
  const wrapper = (l) => {
    const m = /cell (\d+):(\d+)/.exec(l);
    return m && cellLines.has(Number(m[1])) && Number(m[2]) > cellLines.get(Number(m[1]));
  };
  const kept = text.split("\n").filter((l) => !(/^\s+at /.test(l) && (l.includes(__filename) || /[( ]node:/.test(l) || /\(<anonymous>\)$/.test(l) || wrapper(l))));
  text = kept.join("\n").replace(cellFrame, (m, c, l) => "cell line " + cellLine(Number(c), Number(l))).replace(cellName, "cell $1");
  if (underRoot) text = text.replace(underRoot, "");
  text = text.trim();
  return text || "an exception with no message: " + util.inspect(e);
}

// compileError is a SyntaxError of the cell's code, with the cell's own
// line (not the line as transform() rewrote it, nor TypeScript's output's).
function compileError(e, src, cell) {
  const m = /^(?:.*\/)?cell \d+:(\d+)\n/.exec(String(e.stack));
  const line = m ? cellLine(cell, Number(m[1])) : 0;
  const orig = src.split("\n")[line - 1];
  const head = line && orig !== undefined ? "cell line " + line + ": " + orig.trim() + "\n" : "";
  return { line, text: head + e.name + ": " + e.message };
}

// stopAt says which statement a cell stopped at, for a cell of more than
// one statement.
function stopAt(kind, info, statement) {
  if (info.length < 2 || !statement || statement > info.length) return null;
  const at = info[statement - 1];
  const stop = { kind, statement, statements: info.length, line: at.line, end_line: at.end };
  if (statement < info.length) {
    stop.rest_line = info[statement].line;
    stop.rest_end_line = info[info.length - 1].end;
  }
  return stop;
}

// TypeScript cells are compiled by the compiler Go names (transpileModule:
// types stripped, nothing checked) and then run as JavaScript cells are.
// The output's lines are not the cell's (a type declaration leaves no
// line), so its source map says which cell line each output line is.
const tsMaps = new Map(); // cell → [output line → cell line]
let tsCompiler = null;

function cellLine(cell, line) {
  const map = tsMaps.get(cell);
  return map && line >= 1 && line <= map.length ? map[line - 1] : line;
}

class TSError extends Error {
  constructor(line, message) {
    super(message);
    this.name = "TypeScript";
    this.line = line;
  }
}

function compileTypeScript(src, file) {
  if (!tsCompiler || tsCompiler.file !== file) {
    try {
      tsCompiler = { file, ts: require(file) };
    } catch (e) {
      throw new TSError(0, "the TypeScript compiler " + file + " could not be loaded: " + e.message);
    }
  }
  const ts = tsCompiler.ts;
  const out = ts.transpileModule(src, {
    fileName: "cell.ts", reportDiagnostics: true,
    // verbatimModuleSyntax keeps an import whose names this cell does not
    // use (a later cell may); types come in with `import type`.
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: true, removeComments: true, verbatimModuleSyntax: true },
  });
  const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length) {
    const d = errors[0];
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    throw new TSError(line, "TS" + d.code + ": " + ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  }
  // The cell's own top-level statements, for where a cell stopped: the
  // compiled code has others (a type has none, an enum two).
  const sf = ts.createSourceFile("cell.ts", src, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const line = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const statements = sf.statements.map((st) => ({ line: line(st.getStart(sf)), end: line(Math.max(st.getStart(sf), st.end - 1)) }));
  const code = out.outputText.replace(/\n?\/\/# sourceMappingURL=[^\n]*\s*$/, "\n");
  return { code, statements, map: sourceLines(JSON.parse(out.sourceMapText).mappings, src.split("\n").length) };
}

// sourceLines reads a source map's mappings: for each output line, the
// source line (from 1) of its first mapped segment, else the line before's.
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function sourceLines(mappings, max) {
  const out = [];
  let orig = 0;
  for (const line of mappings.split(";")) {
    let first = null;
    for (const seg of line.split(",")) {
      const vals = [];
      let v = 0, shift = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        if (d < 0) break;
        v += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          vals.push(v & 1 ? -(v >>> 1) : v >>> 1);
          v = 0;
          shift = 0;
        }
      }
      if (vals.length >= 4) {
        orig += vals[2];
        if (first === null) first = orig;
      }
    }
    out.push(first === null ? (out.length ? out[out.length - 1] : 1) : Math.min(Math.max(first + 1, 1), max));
  }
  return out;
}

// SIGINT outside a running script (it breaks one by itself) ends the cell's
// wait for its promise; the context stays.
let interruptCell = null;
let sigint = false;
process.on("SIGINT", () => {
  if (current === null) return;
  sigint = true;
  send({ type: "interrupted", cell: current });
  if (interruptCell) interruptCell();
});
send({ type: "ready", pid: process.pid, node: process.version });
(async () => {
  for (;;) {
    const msg = recv(0);
    const cell = msg.cell;
    let result = null, error = null, oom = false, stop = null;
    current = cell;
    sigint = false;
    let code = msg.code;
    let ts = null, tsInfo = null;
    let info = [];
    let script = null;
    try {
      if (msg.typescript) {
        const c = (ts = compileTypeScript(msg.code, msg.typescript));
        code = c.code;
        tsMaps.set(cell, c.map);
        if (tsMaps.size > 256) tsMaps.delete(tsMaps.keys().next().value);
      }
      cellLines.set(cell, code.split("\n").length);
      if (cellLines.size > 256) cellLines.delete(cellLines.keys().next().value);
      const t = transform(code, cell);
      info = t.info.map((x) => ({ line: cellLine(cell, x.line), end: cellLine(cell, x.end) }));
      if (ts) tsInfo = ts.statements;
      // The async form opens on the cell's first line, so lines match.
      // The file name, in the root, is what imports resolve from.
      script = new vm.Script(t.code, { filename: path.join(root, "cell " + cell), importModuleDynamically: mainLoader || undefined });
      context[AT] = [cell, 1];
      // SIGINT (a clock ran out) breaks a running script and keeps the
      // context. No source line atop a stack: it would be the rewritten
      // one; the frames name the cell's lines.
      let value = owner.run(cell, () => script.runInContext(context, { breakOnSigint: true, displayErrors: false }));
      if (t.isAsync) {
        const stopped = new Promise((_, reject) => { interruptCell = () => reject(new Error("Interrupted: the cell was interrupted while it waited")); });
        // A promise that never settles must not let Node exit for want
        // of work: the interrupt has to find the kernel alive.
        const alive = setInterval(() => {}, 1 << 30);
        try {
          value = await Promise.race([value, stopped]);
        } finally {
          clearInterval(alive);
        }
      }
      if (value !== undefined) result = util.inspect(value, { depth: 4, breakLength: 100 });
    } catch (e) {
      const multiline = msg.code.trim().includes("\n");
      if (e instanceof TSError) {
        const orig = msg.code.split("\n")[e.line - 1];
        error = (e.line && orig !== undefined ? "cell line " + e.line + ": " + orig.trim() + "\n" : "") + e.message;
        if (multiline && e.line) stop = { kind: "compile", line: e.line };
      } else if (e instanceof Unsupported) {
        const line = cellLine(cell, e.line);
        error = "cell line " + line + ": " + e.message;
        if (multiline) stop = { kind: "unsupported", statement: e.statement, statements: e.statements, line };
      } else if (script === null) {
        const c = compileError(e, msg.code, cell);
        error = c.text;
        if (multiline && c.line) stop = { kind: "compile", line: c.line, statements: info.length || undefined };
      } else {
        oom = e instanceof RangeError && /allocation failed|Invalid string length|Invalid array length/.test(String(e.message));
        error = errorText(e);
        const at = context[AT];
        const interrupted = sigint || (e && e.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED");
        let n = Array.isArray(at) && at[0] === cell ? at[1] : 0;
        if (tsInfo && n > 0 && n <= info.length) {
          // The cell's statement holding the compiled one's line.
          const l = info[n - 1].line;
          n = tsInfo.findIndex((x) => x.line <= l && l <= x.end) + 1;
          info = tsInfo;
        }
        stop = stopAt(interrupted ? "interrupt" : "error", info, n);
      }
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
    if (stop !== null) done.stop = stop;
    if (oom) done.oom = true;
    send(done);
  }
})();
