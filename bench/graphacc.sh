#!/usr/bin/env bash
# Measures the code graph's call edges (package graph) against a language
# server's call hierarchy: precision per resolution class, recall, and
# every miss and false positive with its cause.
#
#   bench/graphacc.sh [go|python|typescript|javascript|c] [extra graphacc flags...]
#
# Run from the repository root. go: gopls (PATH or .tools/bin) on
# $(go env GOROOT)/src, 50 targets; python: pyright-langserver (PATH or
# .tools/node_modules/.bin) on /usr/lib/python3.11, 30 targets;
# typescript: typescript-language-server (.tools/node_modules/.bin) on a
# copy of the TypeScript sources of ajv (lib/) and zod (src/) that
# scripts/install.sh put in .tools/node_modules, with a tsconfig.json that
# makes them one project, 30 targets; javascript: the same server on a copy
# of pino, ws and commander (CommonJS) with a jsconfig.json, 30 targets; c: clangd (PATH) with its background
# index on a copy of the tree-sitter runtime that go-tree-sitter vendors
# (its .c and .h files, from the Go module cache), with a
# compile_commands.json, 30 targets. The
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
typescript | javascript) server=${TSLS:-$(command -v typescript-language-server || echo .tools/node_modules/.bin/typescript-language-server)} ;;
c) server=${CLANGD:-$(command -v clangd || echo clangd)} ;;
*) echo "bench/graphacc.sh: language must be go, python, typescript, javascript or c" >&2; exit 2 ;;
esac
[[ -x "$server" ]] || { echo "bench/graphacc.sh: $server missing" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go -C bench build -o "$tmp/graphacc" ./graphacc
rootflag=()
if [[ "$lang" == typescript ]]; then
	nm=.tools/node_modules
	for d in "$nm/ajv/lib" "$nm/zod/src"; do
		[[ -d "$d" ]] || { echo "bench/graphacc.sh: $d missing; run scripts/install.sh" >&2; exit 2; }
	done
	mkdir -p "$tmp/ts"
	cp -r "$nm/ajv/lib" "$tmp/ts/ajv"
	cp -r "$nm/zod/src" "$tmp/ts/zod"
	# tsserver resolves ajv's JSON imports and zod's .js specifiers itself.
	cat >"$tmp/ts/tsconfig.json" <<'JSON'
{"compilerOptions": {"target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "resolveJsonModule": true, "strict": true, "noEmit": true, "skipLibCheck": true},
 "include": ["**/*.ts"]}
JSON
	rootflag=(-root "$tmp/ts")
	PATH="$PWD/.tools/node_modules/.bin:$PATH"
fi
if [[ "$lang" == javascript ]]; then
	nm=.tools/node_modules
	mkdir -p "$tmp/js"
	for p in pino ws commander; do
		[[ -d "$nm/$p" ]] || { echo "bench/graphacc.sh: $nm/$p missing; run scripts/install.sh" >&2; exit 2; }
		(cd "$nm" && find "$p" -name '*.js' -not -path '*/node_modules/*' -not -name '*.min.js' -exec cp --parents {} "$tmp/js/" \;)
	done
	cat >"$tmp/js/jsconfig.json" <<'JSON'
{"compilerOptions": {"target": "es2022", "module": "commonjs", "allowJs": true, "checkJs": false, "noEmit": true},
 "include": ["**/*.js"]}
JSON
	rootflag=(-root "$tmp/js" -per-dir 6) # few folders
	PATH="$PWD/.tools/node_modules/.bin:$PATH"
fi
if [[ "$lang" == c ]]; then
	mod=$(go list -m -f '{{.Dir}}' github.com/smacker/go-tree-sitter)
	mkdir -p "$tmp/c"
	cp "$mod"/*.c "$mod"/*.h "$tmp/c/"
	chmod -R u+w "$tmp/c"
	(cd "$tmp/c" && for f in *.c; do printf '{"directory": "%s", "file": "%s", "arguments": ["cc", "-std=c11", "-I.", "-c", "%s"]}\n' "$PWD" "$f" "$f"; done | paste -sd, | sed 's/^/[/; s/$/]/') >"$tmp/c/compile_commands.json"
	rootflag=(-root "$tmp/c" -per-dir 1000) # one folder
fi

version=
[[ "$lang" == go ]] && version="; $("$server" version | head -1)"
if [[ "$lang" == typescript || "$lang" == javascript ]]; then
	v() { node -p "require('./$1/package.json').version"; }
	version="; typescript-language-server $("$server" --version), typescript $(v "$nm/typescript")"
	if [[ "$lang" == typescript ]]; then version="$version, ajv $(v "$nm/ajv"), zod $(v "$nm/zod")"; else version="$version, pino $(v "$nm/pino"), ws $(v "$nm/ws"), commander $(v "$nm/commander")"; fi
fi
[[ "$lang" == c ]] && version="; $("$server" --version | head -1); tree-sitter runtime from $(basename "$mod")"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3)$version"
"$tmp/graphacc" -lang "$lang" "${rootflag[@]}" -server "$server" -out "$out/$lang.md" -server-log "$out/$lang.server.log" "$@"
