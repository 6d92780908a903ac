#!/bin/sh
# A stand-in for `claude -p --output-format stream-json --verbose`, whose
# real CLI needs a network: it replays a recorded stream from this folder.
# --resume ID replays the resumed session (an unknown ID fails as claude
# does); a prompt that says "fixture NAME" replays NAME. The arguments and
# the prompt go to $FAKE_CLI_LOG; $FAKE_CLI_PAUSE seconds (1 when the prompt says "slowly") pass after each
# record.
dir=$(dirname "$0")
args="$*"
prompt=$(cat)
fixture=claude-stream.jsonl
resume=""
while [ $# -gt 0 ]; do
	case "$1" in --resume) resume=$2; shift ;; esac
	shift
done
[ -n "$FAKE_CLI_LOG" ] && printf 'args: %s\nprompt: %s\n' "$args" "$prompt" >> "$FAKE_CLI_LOG"
if [ -n "$resume" ]; then
	if [ "$resume" != "3f1c2a9e-6b7d-4e21-9a0c-5d8e7f6a1b2c" ]; then
		echo "No conversation found with session ID: $resume" >&2
		exit 1
	fi
	fixture=claude-resume.jsonl
fi
. "$dir/replay.sh"
replay
exit 0
