#!/usr/bin/env bash
# Issue 32's cross-process target: N `builtin-tools serve` processes over
# one Go module, each asking `lsp references` and writing a file, with and
# without --lsp-broker; prints the gopls processes, their total resident
# memory beside one isolated process's, and each process's first answer
# (bench/lspbroker/main.go says how), as BENCHMARKS.md quotes:
#
#   bench/lspbroker.sh [ROUNDS] [N]
#   BASE=<commit> bench/lspbroker.sh [ROUNDS] [N]   # also the tree at <commit>, interleaved
#
# Needs gopls on PATH (scripts/install-lsp.sh puts it in .tools/bin).
set -euo pipefail
rounds=${1:-3}
n=${2:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH="$PWD/.tools/bin:$PATH"
command -v gopls >/dev/null || { echo "bench/lspbroker.sh: gopls missing; run scripts/install-lsp.sh" >&2; exit 2; }
go -C bench build -o "$tmp/lspbroker" ./lspbroker
go build -o "$tmp/new" ./cmd/builtin-tools
bins="new=$tmp/new"
if [[ -n "${BASE:-}" ]]; then
	git worktree add -q --detach "$tmp/basewt" "$BASE"
	trap 'git worktree remove --force "$tmp/basewt"; rm -rf "$tmp"' EXIT
	go -C "$tmp/basewt" build -o "$tmp/base" ./cmd/builtin-tools
	bins="base=$tmp/base,$bins"
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(gopls version | head -1); rounds $rounds, $n processes${BASE:+; base $BASE}"
"$tmp/lspbroker" -bins "$bins" -rounds "$rounds" -n "$n"
