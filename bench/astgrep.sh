#!/usr/bin/env bash
# Benchmarks the astgrep engine beside ast-grep 0.51.1 on a Go tree
# (default: $(go env GOROOT)/src), as BENCHMARKS.md ("Structural search") reports.
#
#   bench/astgrep.sh [ROOT] [ROUNDS]
#
# Run from the repository root after scripts/install-astgrep.sh. Needs GNU
# time at /usr/bin/time for peak memory (Debian: apt-get install time).
#
# For each pattern it runs, ROUNDS times and alternating:
#   ast-grep run -p PATTERN -l go --globs '!**/vendor/**' --json=stream ROOT
#   astgrepbench -runs 1   (cold: a new process, a new engine, empty cache)
#   astgrepbench -runs 3   (cold, then the same query twice more in the
#                           same process: warm, served by the parse cache)
#   the same with -cache-bytes 1GiB (room for every parsed file)
# and prints the median wall time and peak RSS of each, the match counts
# (which must agree), and the ratios. Vendored folders are excluded on both
# sides (the engine skips them by itself); the engine's file-size limit is
# raised so both tools see the same files.
set -euo pipefail

name=bench/astgrep.sh
. "$(dirname "$0")/lib.sh"
go -C bench build -o "$tmp/astgrepbench" ./astgrepbench
bench="$tmp/astgrepbench"


echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# root $root; $("$ag" --version); $(go version | cut -d' ' -f3); rounds $rounds"
printf '%-20s %-12s %10s %10s %10s\n' pattern tool seconds peak_MiB matches

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
	: >"$tmp/ag.s" >"$tmp/ag.m" >"$tmp/cold.s" >"$tmp/cold.m" >"$tmp/warm.s" >"$tmp/warm.m" >"$tmp/big.s" >"$tmp/big.m"
	agcount= ourcount=
	for ((r = 1; r <= rounds; r++)); do
		"$gnutime" -o "$tmp/t" -f '%e %M' "$ag" "${agq[@]}" --globs '!**/vendor/**' --json=stream "$root" >"$tmp/ag.out"
		read -r s m <"$tmp/t"
		echo "$s" >>"$tmp/ag.s"
		echo "$m" >>"$tmp/ag.m"
		agcount=$(wc -l <"$tmp/ag.out")

		"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" "${ourq[@]}" -lang go -max-file-size 67108864 -runs 1 >"$tmp/cold.out"
		read -r s m <"$tmp/t"
		echo "$s" >>"$tmp/cold.s"
		echo "$m" >>"$tmp/cold.m"
		ourcount=$(sed -n 's/.* matches=\([0-9]*\) .*/\1/p' "$tmp/cold.out")

		"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" "${ourq[@]}" -lang go -max-file-size 67108864 -runs 3 >"$tmp/warm.out"
		read -r s m <"$tmp/t"
		echo "$m" >>"$tmp/warm.m"
		# The fastest warm run of the process (runs 2 and 3).
		sed -n 's/.*kind=warm seconds=\([0-9.]*\) .*/\1/p' "$tmp/warm.out" | sort -g | head -1 >>"$tmp/warm.s"
		sed -n 's/.*kind=warm .*files_parsed=\([0-9]*\) files_cached=\([0-9]*\).*/\2 of \1/p' "$tmp/warm.out" | tail -1 >"$tmp/warm.cached"

		# The same with a cache large enough for every parsed file.
		"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" "${ourq[@]}" -lang go -max-file-size 67108864 -runs 3 -cache-bytes 1073741824 >"$tmp/big.out"
		read -r s m <"$tmp/t"
		echo "$m" >>"$tmp/big.m"
		sed -n 's/.*kind=warm seconds=\([0-9.]*\) .*/\1/p' "$tmp/big.out" | sort -g | head -1 >>"$tmp/big.s"
		sed -n 's/.*kind=warm .*files_parsed=\([0-9]*\) files_cached=\([0-9]*\).*/\2 of \1/p' "$tmp/big.out" | tail -1 >"$tmp/big.cached"
	done
	ags=$(median <"$tmp/ag.s")
	agm=$(median <"$tmp/ag.m")
	cs=$(median <"$tmp/cold.s")
	cm=$(median <"$tmp/cold.m")
	ws=$(median <"$tmp/warm.s")
	wm=$(median <"$tmp/warm.m")
		printf '%-20s %-12s %10s %10s %10s\n' "$pattern" ast-grep "$ags" "$(mib "$agm")" "$agcount"
	printf '%-20s %-12s %10s %10s %10s\n' "$pattern" ours-cold "$cs" "$(mib "$cm")" "$ourcount"
	printf '%-20s %-12s %10s %10s %10s\n' "$pattern" ours-warm "$ws" "$(mib "$wm")" "$ourcount (cached: $(cat "$tmp/warm.cached") parsed files)"
	bs=$(median <"$tmp/big.s")
	bm=$(median <"$tmp/big.m")
	printf '%-20s %-12s %10s %10s %10s\n' "$pattern" ours-warm-1G "$bs" "$(mib "$bm")" "$ourcount (cached: $(cat "$tmp/big.cached") parsed files)"
	awk -v a="$ags" -v c="$cs" -v w="$ws" -v b="$bs" -v p="$pattern" 'BEGIN {printf "%-20s ratios: cold %.2fx, warm %.1fx (1 GiB cache: %.1fx) faster than ast-grep\n", p, a/c, a/w, a/b}'
	if [[ "$agcount" != "$ourcount" ]]; then
		echo "bench/astgrep.sh: match counts differ for $pattern: ast-grep $agcount, ours $ourcount" >&2
		exit 1
	fi
done
