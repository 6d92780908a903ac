#!/usr/bin/env bash
# Is a newer tree-sitter runtime faster than the one the engine links?
# Parses every .go file under ROOT (default $(go env GOROOT)/src, vendor
# folders left out) on one thread, three times each, with
#   bundled:  go-tree-sitter's runtime and Go grammar (what astgrep and graph use)
#   official: the official Go binding, tree-sitter 0.25, tree-sitter-go 0.25
# and the bundled one again built with -O3, as BENCHMARKS.md reports:
#
#   bench/tsruntime.sh [ROOT]
set -euo pipefail
cd "$(dirname "$0")/tsruntime"
root=${1:-$(go env GOROOT)/src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bundled" ./bundled
go build -o "$tmp/official" ./official
CGO_CFLAGS=-O3 go build -a -o "$tmp/bundled-O3" ./bundled
"$tmp/bundled" "$root"
"$tmp/official" "$root"
echo "# built with CGO_CFLAGS=-O3:"
"$tmp/bundled-O3" "$root"
