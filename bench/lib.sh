# Sourced by bench/astgrep.sh and bench/graph.sh (after `set -euo pipefail`,
# with name set to the script's name): the tree and rounds from the
# arguments, ast-grep and GNU time checked, a temporary folder removed on
# exit, and the median and KiB-to-MiB helpers.
root=${1:-$(go env GOROOT)/src}
rounds=${2:-3}
ag=${AST_GREP:-.tools/bin/ast-grep}
gnutime=/usr/bin/time

[[ -x "$ag" ]] || { echo "$name: $ag missing; run scripts/install-astgrep.sh" >&2; exit 2; }
"$gnutime" -f %M true >/dev/null 2>&1 || { echo "$name: GNU time missing at $gnutime (apt-get install time)" >&2; exit 2; }
[[ -d "$root" ]] || { echo "$name: no folder $root" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k/1024}'; }
