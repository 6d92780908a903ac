#!/usr/bin/env bash
# Measures the code graph's call edges (package graph) against a language
# server's call hierarchy: precision per resolution class, recall, and
# every miss and false positive with its cause.
#
#   bench/graphacc.sh [go|python] [extra graphacc flags...]
#
# Run from the repository root. go: gopls (PATH or .tools/bin) on
# $(go env GOROOT)/src, 50 targets; python: pyright-langserver (PATH or
# .tools/node_modules/.bin) on /usr/lib/python3.11, 30 targets. The
# summary goes to stdout, the full report to bench/graphacc/out/LANG.md and
# the server's stderr to bench/graphacc/out/LANG.server.log.
set -euo pipefail

lang=${1:-go}
[[ $# -gt 0 ]] && shift
out=bench/graphacc/out
mkdir -p "$out"

case "$lang" in
go) server=${GOPLS:-$(command -v gopls || echo .tools/bin/gopls)} ;;
python) server=${PYRIGHT:-$(command -v pyright-langserver || echo .tools/node_modules/.bin/pyright-langserver)} ;;
*) echo "bench/graphacc.sh: language must be go or python" >&2; exit 2 ;;
esac
[[ -x "$server" ]] || { echo "bench/graphacc.sh: $server missing" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/graphacc" ./bench/graphacc

version=
[[ "$lang" == go ]] && version="; $("$server" version | head -1)"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3)$version"
"$tmp/graphacc" -lang "$lang" -server "$server" -out "$out/$lang.md" -server-log "$out/$lang.server.log" "$@"
