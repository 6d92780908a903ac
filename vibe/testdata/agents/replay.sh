# replay.sh, sourced by the fake agent CLIs: replay picks the fixture a
# prompt names ("fixture NAME", else $fixture) and prints its records from
# this folder, $FAKE_CLI_PAUSE seconds (1 when the prompt says "slowly")
# after each.
replay() {
	case "$prompt" in
	*"fixture "*) fixture=$(printf '%s' "$prompt" | sed -n 's/.*fixture \([a-z0-9.-]*\).*/\1/p' | head -1) ;;
	esac
	pause=$FAKE_CLI_PAUSE
	case "$prompt" in *"slowly"*) pause=1 ;; esac
	while IFS= read -r line; do
		printf '%s\n' "$line"
		[ -n "$pause" ] && sleep "$pause"
	done < "$dir/$fixture"
}
