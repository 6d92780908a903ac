#!/usr/bin/env bash
# Benchmarks the astgrep engine beside ast-grep 0.51.1 on a Go tree
# (default: $(go env GOROOT)/src), as BENCHMARKS.md ("Structural search") reports.
#
#   bench/astgrep.sh [ROOT] [ROUNDS]
#   BASE=<commit> bench/astgrep.sh [ROOT] [ROUNDS]   # also the engine at <commit>
#
# Run from the repository root after scripts/install-astgrep.sh. Needs GNU
# time at /usr/bin/time for CPU time and peak memory (Debian: apt-get
# install time).
#
# For each pattern it runs, ROUNDS times and alternating:
#   ast-grep run -p PATTERN -l go --globs '!**/vendor/**' --json=stream ROOT
#   astgrepbench -runs 1   (cold: a new process, a new engine, empty cache)
#   with BASE set, the same built from that commit (a git worktree of it)
#   astgrepbench -runs 3   (cold, then the same query twice more in the
#                           same process: warm, served by the parse cache)
#   the same with -cache-bytes 1GiB (room for every parsed file)
# and prints the median wall time, CPU time (user+sys) and peak RSS of
# each, the match counts (which must agree), and the ratios. On a machine
# other work shares, wall time moves with the load; CPU time is the figure
# to compare. Vendored folders are excluded on both sides (the engine
# skips them by itself); the engine's file-size limit is raised so both
# tools see the same files.
set -euo pipefail

name=bench/astgrep.sh
. "$(dirname "$0")/lib.sh"
go -C bench build -o "$tmp/astgrepbench" ./astgrepbench
bench="$tmp/astgrepbench"
base=
if [[ -n "${BASE:-}" ]]; then
	git worktree add -q --detach "$tmp/basewt" "$BASE"
	trap 'git worktree remove --force "$tmp/basewt"; rm -rf "$tmp"' EXIT
	go -C "$tmp/basewt/bench" build -o "$tmp/astgrepbench-base" ./astgrepbench
	base="$tmp/astgrepbench-base"
fi

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# root $root; $("$ag" --version); $(go version | cut -d' ' -f3); rounds $rounds${BASE:+; base $BASE}"
printf '%-20s %-12s %10s %10s %10s %10s\n' pattern tool seconds cpu_s peak_MiB matches

# timed LABEL CMD...: runs CMD under GNU time, its output to $tmp/LABEL.out,
# and appends wall seconds, CPU seconds and peak KiB to $tmp/LABEL.{s,c,m}.
timed() {
	local label=$1
	shift
	"$gnutime" -o "$tmp/t" -f '%e %U %S %M' "$@" >"$tmp/$label.out"
	read -r s u y m <"$tmp/t"
	echo "$s" >>"$tmp/$label.s"
	awk -v u="$u" -v y="$y" 'BEGIN {print u+y}' >>"$tmp/$label.c"
	echo "$m" >>"$tmp/$label.m"
}
row() { # row PATTERN LABEL TOOL [NOTE]
	printf '%-20s %-12s %10s %10s %10s %10s\n' "$1" "$3" "$(median <"$tmp/$2.s")" "$(median <"$tmp/$2.c")" "$(mib "$(median <"$tmp/$2.m")")" "${4:-}"
}

# Patterns (p|...) and rules (r|..., an ast-grep rule object as JSON, run
# by ast-grep scan). ONLY=r runs the rules alone, ONLY=p the patterns.
queries=(
	'p|defer $X.Close()'
	'p|$X := $Y'
	'r|{"kind": "call_expression", "inside": {"kind": "for_statement", "stopBy": "end"}}'
	'r|{"pattern": "defer $X.Close()", "inside": {"kind": "for_statement", "stopBy": "end"}}'
	'r|{"kind": "function_declaration", "has": {"kind": "defer_statement", "stopBy": "end"}}'
)
for entry in "${queries[@]}"; do
	kind=${entry%%|*} q=${entry#*|}
	[[ -z "${ONLY:-}" || "$kind" == "$ONLY" ]] || continue
	if [[ "$kind" == p ]]; then
		pattern=$q agq=(run -p "$q" -l go) ourq=(-pattern "$q")
	else
		pattern="rule ${q:0:48}…" agq=(scan --inline-rules "id: r
language: go
rule: $q") ourq=(-rule "$q")
	fi
	rm -f "$tmp"/*.s "$tmp"/*.c "$tmp"/*.m
	agcount= ourcount= basecount=
	common=(-root "$root" "${ourq[@]}" -lang go -max-file-size 67108864)
	for ((r = 1; r <= rounds; r++)); do
		timed ag "$ag" "${agq[@]}" --globs '!**/vendor/**' --json=stream "$root"
		agcount=$(wc -l <"$tmp/ag.out")

		timed cold "$bench" "${common[@]}" -runs 1
		ourcount=$(sed -n 's/.* matches=\([0-9]*\) .*/\1/p' "$tmp/cold.out")

		if [[ -n "$base" ]]; then
			timed base "$base" "${common[@]}" -runs 1
			basecount=$(sed -n 's/.* matches=\([0-9]*\) .*/\1/p' "$tmp/base.out")
		fi

		timed warm "$bench" "${common[@]}" -runs 3
		# The fastest warm run of the process (runs 2 and 3).
		sed -n 's/.*kind=warm seconds=\([0-9.]*\) .*/\1/p' "$tmp/warm.out" | sort -g | head -1 >>"$tmp/warmrun.s"
		sed -n 's/.*kind=warm .*files_parsed=\([0-9]*\) files_cached=\([0-9]*\).*/\2 of \1/p' "$tmp/warm.out" | tail -1 >"$tmp/warm.cached"

		# The same with a cache large enough for every parsed file.
		timed big "$bench" "${common[@]}" -runs 3 -cache-bytes 1073741824
		sed -n 's/.*kind=warm seconds=\([0-9.]*\) .*/\1/p' "$tmp/big.out" | sort -g | head -1 >>"$tmp/bigrun.s"
		sed -n 's/.*kind=warm .*files_parsed=\([0-9]*\) files_cached=\([0-9]*\).*/\2 of \1/p' "$tmp/big.out" | tail -1 >"$tmp/big.cached"
	done
	row "$pattern" ag ast-grep "$agcount"
	row "$pattern" cold ours-cold "$ourcount"
	[[ -z "$base" ]] || row "$pattern" base base-cold "$basecount"
	# Warm: the fastest repeat's seconds; CPU and peak are the whole
	# process's (a cold run and two warm ones).
	cp "$tmp/warmrun.s" "$tmp/warmr.s"; cp "$tmp/warm.c" "$tmp/warmr.c"; cp "$tmp/warm.m" "$tmp/warmr.m"
	row "$pattern" warmr ours-warm "$ourcount (cached: $(cat "$tmp/warm.cached") parsed files; CPU of 3 runs)"
	cp "$tmp/bigrun.s" "$tmp/bigr.s"; cp "$tmp/big.c" "$tmp/bigr.c"; cp "$tmp/big.m" "$tmp/bigr.m"
	row "$pattern" bigr ours-warm-1G "$ourcount (cached: $(cat "$tmp/big.cached") parsed files; CPU of 3 runs)"
	ags=$(median <"$tmp/ag.s") agc=$(median <"$tmp/ag.c") agm=$(median <"$tmp/ag.m")
	awk -v a="$ags" -v c="$(median <"$tmp/cold.s")" -v w="$(median <"$tmp/warmrun.s")" -v b="$(median <"$tmp/bigrun.s")" -v p="$pattern" \
		'BEGIN {printf "%-20s ratios: cold %.2fx, warm %.1fx (1 GiB cache: %.1fx) faster than ast-grep (wall)\n", p, a/c, a/w, a/b}'
	awk -v a="$agc" -v c="$(median <"$tmp/cold.c")" -v am="$agm" -v cm="$(median <"$tmp/cold.m")" -v p="$pattern" \
		'BEGIN {printf "%-20s cold by CPU: %.2fx faster than ast-grep, at %.2fx its peak memory\n", p, a/c, cm/am}'
	if [[ -n "$base" ]]; then
		awk -v a="$agc" -v c="$(median <"$tmp/base.c")" -v am="$agm" -v cm="$(median <"$tmp/base.m")" -v p="$pattern" \
			'BEGIN {printf "%-20s base by CPU: %.2fx faster than ast-grep, at %.2fx its peak memory\n", p, a/c, cm/am}'
	fi
	if [[ "$agcount" != "$ourcount" ]]; then
		echo "bench/astgrep.sh: match counts differ for $pattern: ast-grep $agcount, ours $ourcount" >&2
		exit 1
	fi
done
