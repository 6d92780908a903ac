#!/usr/bin/env bash
# Benchmarks the code graph (package graph) on a Go tree (default
# $(go env GOROOT)/src) beside ast-grep 0.51.1, as BENCHMARKS.md reports:
#
#   bench/graph.sh [ROOT] [ROUNDS]
#
# Run from the repository root after scripts/install-astgrep.sh; needs GNU
# time at /usr/bin/time. Alternating, ROUNDS times:
#   ast-grep run -p 'defer $X.Close()' -l go --globs '!**/vendor/**' ROOT
#                                   (one scan of the tree with one pattern)
#   graphbench -mode build          (cold: a new process, no store)
#   graphbench -mode build -cache D (warm: a new process, D's graph store
#                                    and the root's manifest)
# then once, on a scratch copy of ROOT, graphbench -mode queries: callers,
# callees and impact (depth 3) of 50 functions and methods chosen by seed,
# and the re-index after a one-file edit of each target's file; then
# graphbench -mode refresh-latency: callers of the same targets, in a loop,
# while 200 files changed at once outside the tools are re-read in the
# background (three rounds).
set -euo pipefail

name=bench/graph.sh
. "$(dirname "$0")/lib.sh"
go -C bench build -o "$tmp/graphbench" ./graphbench
bench="$tmp/graphbench"

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# root $root; $("$ag" --version); $(go version | cut -d' ' -f3); rounds $rounds"
mkdir "$tmp/cache" "$tmp/parse-only" "$tmp/parse-only/go"
# The parse alone: the same build with a one-pattern query for Go.
cp graph/languages/go/language.json "$tmp/parse-only/go/"
echo '(package_clause (package_identifier) @name) @package' >"$tmp/parse-only/go/tags.scm"
for ((r = 1; r <= rounds; r++)); do
	"$gnutime" -o "$tmp/t" -f '%e %M' "$ag" run -p 'defer $X.Close()' -l go --globs '!**/vendor/**' "$root" >/dev/null
	read -r s m <"$tmp/t"; echo "$s" >>"$tmp/ag.s"; echo "$m" >>"$tmp/ag.m"
	"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" -mode build >"$tmp/cold.out"
	read -r s m <"$tmp/t"; echo "$s" >>"$tmp/cold.s"; echo "$m" >>"$tmp/cold.m"
	"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" -mode build -query-dirs "$tmp/parse-only" >/dev/null
	read -r s m <"$tmp/t"; echo "$s" >>"$tmp/parse.s"
	rm -rf "$tmp/cache"/*
	"$bench" -root "$root" -mode build -cache "$tmp/cache" >/dev/null # writes the records and the manifest
	"$gnutime" -o "$tmp/t" -f '%e %M' "$bench" -root "$root" -mode build -cache "$tmp/cache" >"$tmp/warm.out"
	read -r s m <"$tmp/t"; echo "$s" >>"$tmp/warm.s"; echo "$m" >>"$tmp/warm.m"
done
cat "$tmp/cold.out" "$tmp/warm.out"
printf '%-34s %10s %10s\n' run seconds peak_MiB
printf '%-34s %10s %10s\n' "ast-grep, one pattern" "$(median <"$tmp/ag.s")" "$(mib "$(median <"$tmp/ag.m")")"
printf '%-34s %10s %10s\n' "graph, cold index (process)" "$(median <"$tmp/cold.s")" "$(mib "$(median <"$tmp/cold.m")")"
printf '%-34s %10s\n' "graph, parse only (one pattern)" "$(median <"$tmp/parse.s")"
printf '%-34s %10s %10s\n' "graph, warm from the store (process)" "$(median <"$tmp/warm.s")" "$(mib "$(median <"$tmp/warm.m")")"
awk -v a="$(median <"$tmp/ag.s")" -v c="$(median <"$tmp/cold.s")" 'BEGIN {printf "cold index / ast-grep scan: %.2f\n", c/a}'
cp -r "$root" "$tmp/scratch"
"$bench" -root "$tmp/scratch" -mode queries -scratch "$tmp/scratch" -n 50
"$bench" -root "$tmp/scratch" -mode refresh-latency -scratch "$tmp/scratch" -n 50 -files 200 -rounds 3
