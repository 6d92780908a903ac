#!/usr/bin/env python3
"""A scripted language server, for tests of what a hostile server can send.

No real server sends an edit that deletes a README or writes outside the
root, so the tests of lsp_fix's and lsp_rename's refusals play one with
this script. It answers each request with what the script (a JSON file,
the first argument) gives for its method, and runs a command by sending the
workspace/applyEdit requests the script lists for it, one at a time, each
after the client answered the one before, then answering the command.

Script keys:
  capabilities   the initialize result's capabilities (default: code
                 actions with resolve, formatting, rename, commands)
  answers        method -> result; a list under "sequence" gives one
                 result per request, the last repeated
  commands       command name -> list of workspace/applyEdit params
  log            a file every request's method is appended to, and every
                 applyEdit answer (one JSON line each)

As gopls on PATH, "fakelsp.py version" prints a version and exits (the
probe).
"""
import json
import sys

DEFAULT_CAPS = {
    "codeActionProvider": {"resolveProvider": True},
    "documentFormattingProvider": True,
    "renameProvider": True,
    "executeCommandProvider": {"commands": []},
    "textDocumentSync": 1,
}


def read(inp):
    length = None
    while True:
        line = inp.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value)
    if length is None:
        return None
    return json.loads(inp.read(length))


def write(out, msg):
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("version", "--version"):
        print("fakelsp 0.0.1")
        return
    with open(sys.argv[1]) as f:
        script = json.load(f)
    log = script.get("log")

    def note(entry):
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    served = {}
    sent = 0
    while True:
        msg = read(inp)
        if msg is None:
            return
        method = msg.get("method")
        if method == "exit":
            return
        if method is None or "id" not in msg:
            continue  # notifications, and answers nobody waits for
        note({"method": method})
        result = None
        if method == "initialize":
            result = {"capabilities": script.get("capabilities", DEFAULT_CAPS)}
        elif method == "workspace/executeCommand":
            for params in script.get("commands", {}).get(msg["params"]["command"], []):
                sent += 1
                rid = "fake-%d" % sent
                write(out, {"jsonrpc": "2.0", "id": rid, "method": "workspace/applyEdit", "params": params})
                while True:
                    answer = read(inp)
                    if answer is None:
                        return
                    if answer.get("id") == rid and "method" not in answer:
                        note({"applyEdit": answer.get("result")})
                        break
        else:
            answer = script.get("answers", {}).get(method)
            if isinstance(answer, dict) and "sequence" in answer:
                seq = answer["sequence"]
                n = served.get(method, 0)
                served[method] = n + 1
                answer = seq[min(n, len(seq) - 1)]
            result = answer
        write(out, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    main()
