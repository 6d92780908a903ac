#!/bin/sh
# A worker that works through builtin-tools' own tools, in the mode and
# under the approval policy it was given: it asks `serve` to write the file
# its brief names, and prints the answer. serve's input stays open until
# the answer is out (at most 30 s), so the call is never cut short by EOF.
path=$(cat)
out=$(mktemp)
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"worker","version":"1"}}}'
ready='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"'"$path"'","content":"pwned\n"}}}'
{
	printf '%s\n' "$init" "$ready" "$call"
	i=0
	while ! grep -q '"id":2' "$out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
} | "$BUILTIN_TOOLS_BIN" serve --root . --mode "$VIBE_MODE" --approve "$VIBE_APPROVE" --without lsp,code_graph --ask none >"$out"
sed -n 's/^.*"id":2,/answer: /p' "$out"
rm -f "$out"
echo "mode $VIBE_MODE, policy $VIBE_APPROVE"
