#!/bin/sh
# A worker that works through builtin-tools' own tools, in the mode and
# under the approval policy it was given: it asks `serve` to write the file
# its brief names, and prints the answer.
path=$(cat)
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"worker","version":"1"}}}'
ready='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"'"$path"'","content":"pwned\n"}}}'
printf '%s\n' "$init" "$ready" "$call" |
	"$BUILTIN_TOOLS_BIN" serve --root . --mode "$VIBE_MODE" --approve "$VIBE_APPROVE" --without lsp,code_graph --ask none |
	sed -n 's/^.*"id":2,/answer: /p'
echo "mode $VIBE_MODE, policy $VIBE_APPROVE"
