#!/bin/sh
# A stand-in for `codex exec --json`, whose real CLI needs a network: it
# replays a recorded event stream from this folder. `exec ... resume ID`
# replays the resumed thread; a prompt that says "fixture NAME" replays
# NAME. The arguments and the prompt go to $FAKE_CLI_LOG; $FAKE_CLI_PAUSE
# seconds (1 when the prompt says "slowly") pass after each event.
dir=$(dirname "$0")
args="$*"
prompt=$(cat)
fixture=codex-exec.jsonl
[ "$1" = exec ] || { echo "usage: codex exec [--json] [resume ID] [-]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	resume)
		[ "$2" = "0199a7e2-5c3b-7d11-9f4e-2b6c8d0a1e57" ] || { echo "Error: thread $2 not found" >&2; exit 1; }
		fixture=codex-resume.jsonl
		shift
		;;
	esac
	shift
done
[ -n "$FAKE_CLI_LOG" ] && printf 'args: %s\nprompt: %s\n' "$args" "$prompt" >> "$FAKE_CLI_LOG"
. "$dir/replay.sh"
replay
code=0
[ "$fixture" = codex-failed.jsonl ] && code=1
exit $code
